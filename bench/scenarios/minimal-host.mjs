/**
 * @module Scenario: the plugin on a minimal host (bench/minimal-host.mjs: `createHooksPlugin` from the build's
 * dist/index.js on a plain node:http server, journal on with `fsync: "batch"` in a fresh state directory, a bus
 * whose listeners only count events), POST /hooks/wake with the bench's wake body, against the bare and the durable
 * baseline in rotating rounds. Target: at least 0.80x the durable baseline's req/s. Pinned like every server
 * (core 0). Afterwards the host's counts must show one system event per answered request (none lost, none twice).
 */
import path from "node:path";
import { baselineRows, baselineSides, logBaselineRatios, TARGETS } from "../lib/baselines.mjs";
import { jsonRequest, WAKE_BODY } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { runRounds } from "../lib/load.mjs";
import { HOOKS_BIN, logLines, ROOT, spawnServer } from "../lib/processes.mjs";
import { treeBytes } from "../lib/state.mjs";

const TITLE = "plugin on a minimal host, /wake";

/** The build's plugin entry: dist/index.js beside the bin/hooks.js the bench runs (BENCH_HOOKS_BIN moves both). */
const PLUGIN_ENTRY = path.resolve(path.dirname(HOOKS_BIN), "..", "dist", "index.js");

function startMinimalHost(context, stateDir) {
  return spawnServer({
    label: "minimal host",
    args: [path.join(ROOT, "bench", "minimal-host.mjs")],
    env: {
      BENCH_MINIMAL_TOKEN: context.token,
      BENCH_MINIMAL_STATE_DIR: stateDir,
      BENCH_MINIMAL_PLUGIN: PLUGIN_ENTRY,
    },
  });
}

export const scenario = {
  id: "minimal-host",
  title: "the plugin on a minimal host: /wake vs the baselines",
  async run(context) {
    const request = jsonRequest(context.token, "wake", WAKE_BODY);
    const baselines = await baselineSides(context, request);
    const stateDir = path.join(context.dir, "minimal-host-state");
    const host = await startMinimalHost(context, stateDir);
    context.log(`  minimal host (${PLUGIN_ENTRY}) ready in ${Math.round(host.readyMs)} ms at ${host.url}`);
    let rounds;
    let answered = 0;
    let runs = 0;
    try {
      rounds = await runRounds({
        sides: [{ name: "plugin", server: host, request, expectStatus: 200 }, ...baselines],
        rounds: context.settings.pairs,
        settings: context.settings,
        log: context.log,
        onRun: (side, run) => {
          if (side.name !== "plugin") return;
          answered += run.requests;
          runs++;
        },
      });
    } finally {
      await host.stop("SIGTERM");
    }
    const closed = logLines(host.stopOutput, "minimal host closed").at(-1);
    if (!closed) {
      throw new Error(
        `minimal host: no closing line after SIGTERM\n${host.stopOutput.slice(-1500)}\n${host.stderr}`,
      );
    }
    const events = closed.events["session:system-event"];
    const most = answered + runs * context.settings.connections;
    if (events < answered || events > most) {
      throw new Error(
        `minimal host: ${events} system events for ${answered} answered requests (expected ${answered} to ${most})`,
      );
    }
    const journalBytes = treeBytes(path.join(stateDir, "hooks-journal"));
    if (journalBytes === 0) throw new Error("minimal host: the journal wrote nothing");
    const journal = closed.journal ?? {};
    const perSync =
      journal.fsyncs > 0 ? ` (${(journal.durableLines / journal.fsyncs).toFixed(1)} per fsync)` : "";
    context.log(
      `  ${events} system events for ${answered} answered requests; bus counts ${JSON.stringify(closed.events)}; ` +
        `journal ${(journalBytes / 1e6).toFixed(1)} MB (${Math.round(journalBytes / answered)} B per finished wake), ` +
        `${journal.fsyncs ?? "?"} fsyncs, ${journal.durableLines ?? "?"} durable lines${perSync}`,
    );
    const rows = baselineRows({
      id: "minimal-host",
      title: TITLE,
      rounds,
      side: "plugin",
      durableTarget: TARGETS.minimalHost,
      extra: { events: closed.events, answered, journalBytes, journal },
    });
    logBaselineRatios(context.log, TITLE, rows);
    return rows;
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);
