/**
 * @module Scenario: inside OpenClaw 2026.9.6. One OpenClaw gateway (bench/lib/openclaw.mjs: the end-to-end test's
 * runtime cache, pinned to the server's core with everything it forks) with its own webhooks on `/hooks` (core
 * `hooks: { enabled, token, path: "/hooks" }`), this plugin loaded from the build beside BENCH_HOOKS_BIN (this
 * checkout by default: `plugins.load.paths`, `plugins.entries["hooks-intake"]`, path `/intake`, its own token), and
 * the floor plugin (bench/openclaw-floor/, `/floor/wake`: reads the body, checks the token, parses, queues one system
 * event, answers). Sides in rotating rounds: the plugin's `/intake/wake`, the floor's `/floor/wake`, OpenClaw's
 * `/hooks/wake` (all the bench's wake body, same gateway process), the bare and the durable baseline. Target: the
 * plugin at least 0.90x the floor's req/s; OpenClaw's own endpoint is shown beside it (it routes its hooks around
 * what every plugin route pays, so it is not the bar).
 *
 * Server CPU per request is the whole process tree's: the gateway process (every thread) plus the processes it
 * forked (a spawn broker, SQLite workers), each read from /proc over exactly the run. Start-up takes 13-25 s;
 * BENCH_ONLY=openclaw runs this scenario alone, BENCH_SKIP=openclaw leaves it out of a full run. The first use
 * installs the runtime (openclaw and Node 26, about 850 MB, `node scripts/openclaw-runtime.mjs`).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { baselineRows, baselineSides, logBaselineRatios, TARGET_SOURCE, TARGETS } from "../lib/baselines.mjs";
import { jsonRequest, WAKE_BODY } from "../lib/configs.mjs";
import { isMain, runStandalone } from "../lib/context.mjs";
import { fmtRps, pairsOf, runRounds } from "../lib/load.mjs";
import { FLOOR_PLUGIN_ROOT, OPENCLAW_VERSION, startOpenClaw } from "../lib/openclaw.mjs";
import { HOOKS_BIN, sleep } from "../lib/processes.mjs";
import { pairRows } from "../lib/report.mjs";

const PLUGIN_PATH = "/intake";
const FLOOR_PATH = "/floor";
const PLUGIN_READY_TIMEOUT_MS = 30_000;
const round1 = (value) => Math.round(value * 10) / 10;

/** The checkout the plugin is loaded from: the one whose bin/hooks.js the bench runs. */
const PLUGIN_ROOT = path.resolve(path.dirname(HOOKS_BIN), "..");

function request(token, hookPath) {
  return {
    path: hookPath,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: WAKE_BODY,
  };
}

async function answers(server, { path: hookPath, headers, body }) {
  try {
    const response = await fetch(new URL(hookPath, server.url), { method: "POST", headers, body });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** The plugin's route is registered by the time /readyz says ready; checked anyway, once, before any run. */
export async function waitForRoute(server, probe, timeoutMs = PLUGIN_READY_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  let status = 0;
  while (Date.now() < deadline) {
    status = await answers(server, probe);
    if (status === 200) return;
    await sleep(250);
  }
  throw new Error(`${server.label}: POST ${probe.path} answered ${status}, not 200\n${server.output()}`);
}

/**
 * The gateway's config and the three requests: OpenClaw's own hooks (a token of their own), this plugin and the floor
 * (both the run's token, which the baselines check too). Also used by bench/openclaw-profile.mjs.
 */
export function openclawSides(token) {
  const hex = (bytes) => randomBytes(bytes).toString("hex");
  const builtInToken = hex(24);
  const config = {
    gateway: { mode: "local", auth: { mode: "token", token: hex(24) } },
    hooks: { enabled: true, token: builtInToken, path: "/hooks" },
    plugins: {
      load: { paths: [PLUGIN_ROOT] },
      entries: {
        "hooks-intake": { enabled: true, config: { enabled: true, token, path: PLUGIN_PATH } },
      },
    },
  };
  return {
    config,
    floorConfig: { token, path: FLOOR_PATH },
    plugin: request(token, `${PLUGIN_PATH}/wake`),
    floor: request(token, `${FLOOR_PATH}/wake`),
    own: request(builtInToken, "/hooks/wake"),
  };
}

export const scenario = {
  id: "openclaw",
  title: `inside OpenClaw ${OPENCLAW_VERSION}: this plugin's /wake vs the floor plugin and OpenClaw's own /hooks/wake`,
  async run(context) {
    const { config, floorConfig, plugin, floor, own } = openclawSides(context.token);
    const baselines = await baselineSides(context, jsonRequest(context.token, "wake", WAKE_BODY));
    context.log(`  starting OpenClaw ${OPENCLAW_VERSION} with the plugin from ${PLUGIN_ROOT}`);
    const gateway = await startOpenClaw({
      config,
      floor: floorConfig,
      log: (line) => context.log(`  ${line}`),
    });
    let rounds;
    let helpers;
    let floorCount;
    try {
      context.log(
        `  OpenClaw ready in ${(gateway.readyMs / 1000).toFixed(1)} s at ${gateway.url}, pid ${gateway.pid}`,
      );
      await waitForRoute(gateway, plugin);
      await waitForRoute(gateway, floor);
      const ownStatus = await answers(gateway, own);
      if (ownStatus !== 200) throw new Error(`OpenClaw's POST /hooks/wake answered ${ownStatus}, not 200`);
      // The processes it forked by now (spawn broker, SQLite workers): their CPU counts as the server's.
      helpers = gateway.children();
      context.log(`  helper processes: ${helpers.length > 0 ? helpers.join(", ") : "none"}`);
      const measureOptions = helpers.length > 0 ? { alsoPids: helpers } : {};
      rounds = await runRounds({
        sides: [
          { name: "plugin", server: gateway, request: plugin, expectStatus: 200, measureOptions },
          { name: "floor", server: gateway, request: floor, expectStatus: 200, measureOptions },
          { name: "openclaw", server: gateway, request: own, expectStatus: 200, measureOptions },
          ...baselines,
        ],
        rounds: context.settings.pairs,
        settings: context.settings,
        log: context.log,
      });
      // The floor counts what enqueueSystemEvent accepted: its 200s must have queued events, not been dropped.
      floorCount = await (await fetch(new URL(`${FLOOR_PATH}/count`, gateway.url))).json();
      context.log(
        `  floor: ${floorCount.queued} system events queued, ${floorCount.refused} refused by enqueueSystemEvent`,
      );
      if (floorCount.refused > 0 || floorCount.queued === 0)
        throw new Error(
          `the floor's requests did not all queue a system event: ${JSON.stringify(floorCount)}`,
        );
    } finally {
      await gateway.stop();
    }
    // The tree's CPU: the gateway process plus its helpers over the same window.
    const helperUs = { plugin: [], floor: [], openclaw: [] };
    for (const round of rounds) {
      for (const name of ["plugin", "floor", "openclaw"]) {
        const run = round[name];
        const extra = (run.alsoCpuUsPerRequest ?? []).reduce(
          (sum, us) => sum + (Number.isFinite(us) ? us : 0),
          0,
        );
        helperUs[name].push(round1(extra));
        run.serverCpuUsPerRequest += extra;
      }
    }
    context.log(
      `  helper processes' CPU per request (in the figures above: no; in the rows: yes): ` +
        `plugin ${helperUs.plugin.join(", ")} µs, floor ${helperUs.floor.join(", ")} µs, ` +
        `OpenClaw's ${helperUs.openclaw.join(", ")} µs`,
    );
    const extra = {
      openclaw: OPENCLAW_VERSION,
      pluginRoot: PLUGIN_ROOT,
      floorRoot: FLOOR_PLUGIN_ROOT,
      floorEvents: floorCount,
      readyMs: Math.round(gateway.readyMs),
      helperProcesses: helpers?.length ?? 0,
      helperCpuUsPerRequest: helperUs,
    };
    const rows = pairRows({
      id: "openclaw",
      title: `inside OpenClaw ${OPENCLAW_VERSION}, plugin ${PLUGIN_PATH}/wake vs the floor plugin's ${FLOOR_PATH}/wake`,
      pairs: pairsOf(rounds, "plugin", "floor"),
      rpsTarget: TARGETS.openclaw,
      p99Target: null,
      baselineName: `the floor plugin's ${FLOOR_PATH}/wake, same gateway`,
      targetSource: TARGET_SOURCE,
      extra,
    });
    // Beside it, as information: both against OpenClaw's own endpoint.
    const vsOwn = (side, title) =>
      pairRows({
        id: `openclaw.${side}-vs-own`,
        title: `inside OpenClaw ${OPENCLAW_VERSION}, ${title} vs OpenClaw's own /hooks/wake`,
        pairs: pairsOf(rounds, side, "openclaw"),
        p99Target: null,
        baselineName: "OpenClaw's /hooks/wake, same gateway",
        extra,
      });
    const ownRatios = [
      ...vsOwn("plugin", `plugin ${PLUGIN_PATH}/wake`),
      ...vsOwn("floor", `floor ${FLOOR_PATH}/wake`),
    ];
    const ratio = rows[0];
    const throughputOf = (id) => ownRatios.find((row) => row.id === `openclaw.${id}-vs-own.throughput`).value;
    context.log(
      `  => plugin ${fmtRps(ratio.targetSide.rps)} req/s vs the floor ${fmtRps(ratio.baselineSide.rps)} req/s: ` +
        `${ratio.value.toFixed(2)}x (target >= ${TARGETS.openclaw.toFixed(2)}x, ${TARGET_SOURCE}: ${ratio.pass ? "met" : "NOT met"}); ` +
        `vs OpenClaw's own /hooks/wake: plugin ${throughputOf("plugin").toFixed(2)}x, floor ${throughputOf("floor").toFixed(2)}x`,
    );
    const sideRows = (id, side, title) =>
      baselineRows({ id: `openclaw.${id}`, title: `inside OpenClaw, ${title}`, rounds, side, extra });
    const pluginRows = sideRows("plugin", "plugin", `plugin ${PLUGIN_PATH}/wake`);
    const floorRows = sideRows("floor", "floor", `floor ${FLOOR_PATH}/wake`);
    const ownRows = sideRows("own", "openclaw", "OpenClaw's own /hooks/wake");
    logBaselineRatios(context.log, "plugin inside OpenClaw", pluginRows);
    logBaselineRatios(context.log, "floor plugin inside OpenClaw", floorRows);
    logBaselineRatios(context.log, "OpenClaw's own /hooks/wake", ownRows);
    return [...rows, ...ownRatios, ...pluginRows, ...floorRows, ...ownRows];
  },
};

if (isMain(import.meta.url)) await runStandalone(scenario);
