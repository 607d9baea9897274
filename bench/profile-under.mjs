/**
 * @module What a function's time is made of in bench/openclaw-profile.mjs's windows: the callees (at a depth) of the
 * outermost frame matching a pattern, in µs per request, scaled so each side's busy time is its /proc CPU.
 *
 *   BENCH_PROFILE_KEEP=<dir> BENCH_PROFILE_JSON=<file> node bench/openclaw-profile.mjs plugin floor
 *   node bench/profile-under.mjs <file> <dir> 'enqueueSystemEvent .*loader-runtime' [depth=1] [sides=plugin,floor]
 *
 * The profiles' sample weights are wall time between samples: on a busy machine a descheduled process's samples
 * grow, so the figures are scaled by each side's /proc CPU over its profiled busy time.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const [json, dir, pattern, depthArg = "1", sidesArg = "plugin,floor"] = process.argv.slice(2);
const summary = JSON.parse(readFileSync(json, "utf8"));
const match = new RegExp(pattern);
const depth = Number(depthArg);
const sides = sidesArg.split(",");
const keyOf = (frame) =>
  `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "")}:${frame.lineNumber + 1}`;

const totals = Object.fromEntries(sides.map((side) => [side, new Map()]));
for (const file of readdirSync(dir).filter((entry) => entry.endsWith(".cpuprofile"))) {
  const profile = JSON.parse(readFileSync(path.join(dir, file), "utf8"));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let t = profile.startTime;
  const times = profile.timeDeltas.map((delta) => {
    t += delta;
    return t;
  });
  for (let i = 0; i < profile.samples.length; i++) {
    const side = sides.find((name) =>
      summary.scenarios[name].windows.some(([from, to]) => times[i] >= from && times[i] <= to),
    );
    if (!side) continue;
    const stack = [];
    for (let at = profile.samples[i]; at !== undefined; at = parent.get(at))
      stack.push(byId.get(at).callFrame);
    const outer = stack.findLastIndex((frame) => match.test(keyOf(frame)));
    if (outer < 0) continue;
    const below = outer - depth >= 0 ? keyOf(stack[outer - depth]) : "(self)";
    const weight = (times[i + 1] ?? times[i]) - times[i];
    totals[side].set(below, (totals[side].get(below) ?? 0) + weight);
  }
}
for (const side of sides) {
  const run = summary.scenarios[side];
  const scale = run.procCpuUsPerRequest / ((run.busyMs * 1000) / run.requests);
  const perRequest = (us) => ((us * scale) / run.requests).toFixed(1).padStart(7);
  const rows = [...totals[side]].sort((a, b) => b[1] - a[1]);
  const all = rows.reduce((sum, [, us]) => sum + us, 0);
  process.stdout.write(`\n## ${side}: under /${pattern}/ ${perRequest(all)} µs per request\n`);
  for (const [name, us] of rows.slice(0, 20)) process.stdout.write(`${perRequest(us)}  ${name}\n`);
}
