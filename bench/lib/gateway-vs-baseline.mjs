/** @module The shape of the throughput scenarios: one fresh gateway against the baseline, A B A B, two rows out. */
import { readdirSync } from "node:fs";
import path from "node:path";
import { runPairs } from "./load.mjs";
import { pairRows } from "./report.mjs";

function countFiles(dir) {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
}

export async function gatewayVsBaseline(
  context,
  { id, title, request, expectStatus, rpsTarget, cpuTarget, p99Target, env },
) {
  const baseline = await context.baseline();
  const gateway = await context.startGateway({ label: `gateway (${id})`, env });
  context.log(`  gateway ready in ${Math.round(gateway.readyMs)} ms at ${gateway.url}`);
  try {
    const linesBefore = gateway.stdoutLines;
    const bytesBefore = gateway.stdoutBytes;
    const pairs = await runPairs({
      target: { server: gateway, request, expectStatus },
      baseline: { server: baseline, request, expectStatus: 200 },
      settings: context.settings,
      log: context.log,
    });
    const measured = pairs.reduce((sum, pair) => sum + pair.target.requests, 0);
    // Includes the baseline halves of the pairs, when the gateway only finishes what it already accepted.
    const extra = {
      logLinesPerRequest: Math.round(((gateway.stdoutLines - linesBefore) / measured) * 100) / 100,
      logBytesPerRequest: Math.round((gateway.stdoutBytes - bytesBefore) / measured),
      sessionFiles: countFiles(path.join(gateway.stateDir, "sessions")),
      bodyBytes: Buffer.byteLength(request.body),
    };
    return pairRows({
      id,
      title,
      pairs,
      rpsTarget,
      cpuTarget,
      p99Target,
      baselineName: "bare node:http",
      extra,
    });
  } finally {
    await gateway.stop();
  }
}
