/**
 * @module Where two profiled runs differ, in µs per request: busy and /proc totals, areas, self time and the
 * inclusive time of dist/ functions, largest differences first. Reads the JSON of bench/profile.mjs:
 *
 *   BENCH_PROFILE_JSON=/tmp/prof.json node bench/profile.mjs wake mapped-template
 *   node bench/profile-diff.mjs /tmp/prof.json#wake /tmp/prof.json#mapped-template
 *
 * Each operand is `<file>#<scenario>`, or `<file>,<file>,...#<scenario>` for the median of repeated runs; the second
 * minus the first. BENCH_DIFF_TOP (25) rows per table.
 */
import { readFileSync } from "node:fs";
import { median } from "./lib/load.mjs";

const TOP = Number(process.env.BENCH_DIFF_TOP ?? 25);

function loadOne(file, scenario) {
  const summary = JSON.parse(readFileSync(file, "utf8"));
  const run = summary.scenarios?.[scenario];
  if (!run?.requests) throw new Error(`no profiled run under load named "${scenario}" in ${file}`);
  const perRequest = (rows) => new Map(rows.map((row) => [row.name, (row.ms * 1000) / run.requests]));
  return {
    hooksBin: summary.hooksBin,
    busy: (run.busyMs * 1000) / run.requests,
    proc: run.procCpuUsPerRequest,
    rps: run.rps,
    self: perRequest(run.self),
    inclusive: perRequest(run.inclusive),
    areas: perRequest(run.areas),
  };
}

/** Median per function across repeated runs (a function missing from a run counts as 0 there). */
function medianMap(maps) {
  const names = new Set(maps.flatMap((map) => [...map.keys()]));
  return new Map([...names].map((name) => [name, median(maps.map((map) => map.get(name) ?? 0))]));
}

/** `<file>[,<file>...]#<scenario>`: several files are repeated runs, and each figure is their median. */
function load(operand) {
  const [files, scenario] = operand.split("#");
  const runs = files.split(",").map((file) => loadOne(file, scenario));
  return {
    label: `${scenario} (${runs[0].hooksBin}, ${runs.length} run${runs.length > 1 ? "s" : ""})`,
    busy: median(runs.map((run) => run.busy)),
    proc: median(runs.map((run) => run.proc)),
    rps: Math.round(median(runs.map((run) => run.rps))),
    self: medianMap(runs.map((run) => run.self)),
    inclusive: medianMap(runs.map((run) => run.inclusive)),
    areas: medianMap(runs.map((run) => run.areas)),
  };
}

function diffTable(heading, a, b, filter = () => true) {
  const names = new Set([...a.keys(), ...b.keys()].filter(filter));
  const rows = [...names]
    .map((name) => ({ name, a: a.get(name) ?? 0, b: b.get(name) ?? 0 }))
    .map((row) => ({ ...row, delta: row.b - row.a }))
    .sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta))
    .slice(0, TOP);
  const lines = [`| ${heading} | first µs/req | second µs/req | difference |`, "|---|---|---|---|"];
  for (const row of rows) {
    lines.push(
      `| \`${row.name.replaceAll("|", "\\|")}\` | ${row.a.toFixed(2)} | ${row.b.toFixed(2)} | ${row.delta >= 0 ? "+" : ""}${row.delta.toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

const [first, second] = process.argv.slice(2);
if (!first || !second) {
  process.stderr.write(
    "usage: node bench/profile-diff.mjs <file>[,<file>...]#<scenario> <file>[,...]#<scenario>\n",
  );
  process.exit(2);
}
const a = load(first);
const b = load(second);
const us = (value) => (value === undefined || Number.isNaN(value) ? "?" : value.toFixed(1));
process.stdout.write(
  `first:  ${a.label}: ${a.rps} req/s, ${us(a.busy)} µs busy/req in the profile, ${us(a.proc)} µs CPU/req in /proc\n` +
    `second: ${b.label}: ${b.rps} req/s, ${us(b.busy)} µs busy/req in the profile, ${us(b.proc)} µs CPU/req in /proc\n` +
    `difference: ${us(b.busy - a.busy)} µs busy/req, ${us(b.proc - a.proc)} µs CPU/req\n\n` +
    `${diffTable("area (self time)", a.areas, b.areas)}\n\n` +
    `${diffTable("function (self time)", a.self, b.self)}\n\n` +
    `${diffTable("function in dist/ (inclusive)", a.inclusive, b.inclusive, (name) => / dist\//.test(name))}\n`,
);
