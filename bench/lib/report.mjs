/** @module Result rows: built from measured pairs or values, judged against targets, printed as a Markdown table. */
import { fmtRps, sideSummary, stats } from "./load.mjs";

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function judge(value, target) {
  if (!target) return undefined;
  return target.op === ">=" ? value >= target.value : value <= target.value;
}

function roundStats(values, digits) {
  const s = stats(values);
  return {
    min: round(s.min, digits),
    median: round(s.median, digits),
    max: round(s.max, digits),
    all: values.map((v) => round(v, digits)),
  };
}

function sideJson(side) {
  return {
    rps: Math.round(side.rps),
    p50Ms: round(side.p50Ms),
    p99Ms: round(side.p99Ms),
    serverCpuUsPerRequest: round(side.serverCpuUsPerRequest, 1),
    serverCpuShare: round(side.serverCpuShare),
    clientCpuShare: round(side.clientCpuShare),
    requests: side.requests,
  };
}

/**
 * Three rows from alternating pairs, each the median of the per-pair ratios target/baseline: throughput, server
 * CPU per request, p99. A target left undefined makes its row information only; `targetSource` (e.g. "lean-core target")
 * is printed beside the targets. `extra` lands in results.json.
 */
export function pairRows({
  id,
  title,
  pairs,
  rpsTarget,
  cpuTarget,
  p99Target = 2,
  baselineName,
  targetSource,
  extra = {},
}) {
  const targetSide = sideJson(sideSummary(pairs.map((pair) => pair.target)));
  const baselineSide = sideJson(sideSummary(pairs.map((pair) => pair.baseline)));
  const runs = pairs.map((pair) => ({
    target: sideJson(pair.target),
    baseline: sideJson(pair.baseline),
    rpsRatio: round(pair.rpsRatio, 3),
    cpuRatio: round(pair.cpuRatio, 3),
    p99Ratio: round(pair.p99Ratio, 3),
  }));
  const common = { baseline: baselineName, targetSide, baselineSide, runs, ...extra };
  const row = (suffix, label, ratioOf, goal) => {
    const ratios = roundStats(pairs.map(ratioOf), 3);
    return {
      id: `${id}.${suffix}`,
      title: `${title}: ${label}`,
      kind: goal ? "ratio" : "diagnostic",
      value: ratios.median,
      unit: "x",
      target: goal,
      pass: judge(ratios.median, goal),
      ratios,
      ...common,
    };
  };
  const goal = (op, value) =>
    value ? { op, value, ...(targetSource ? { source: targetSource } : {}) } : undefined;
  return [
    row("throughput", "throughput", (pair) => pair.rpsRatio, goal(">=", rpsTarget)),
    row("cpu", "server CPU per request", (pair) => pair.cpuRatio, goal("<=", cpuTarget)),
    row("p99", "p99 latency", (pair) => pair.p99Ratio, goal("<=", p99Target)),
  ];
}

/** A row judged on one value (start-up time, RSS, the large-body check). */
export function valueRow({ id, title, value, unit, target, pass, values, digits = 1, detail, ...extra }) {
  return {
    id,
    title,
    kind: "value",
    value: round(value, digits),
    unit,
    target,
    pass: pass ?? judge(value, target),
    ...(values ? { values: roundStats(values, digits) } : {}),
    detail,
    ...extra,
  };
}

function show(value, unit) {
  if (unit === "x") return `${value.toFixed(2)}x`;
  return `${value} ${unit}`;
}

function sideText(side) {
  if (!side) return "";
  return (
    `${fmtRps(side.rps)} req/s, ${side.serverCpuUsPerRequest} µs CPU/req, p99 ${side.p99Ms.toFixed(1)} ms, ` +
    `server busy ${Math.round(side.serverCpuShare * 100)} % of a core`
  );
}

/** The Markdown table the runner prints and the README's Performance section carries. */
export function formatTable(rows) {
  const lines = [
    "| Scenario | Result | Target | Pass | min / median / max | Target side | Baseline side |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const target = row.target
      ? `${row.target.op} ${show(row.target.value, row.unit)}${row.target.source ? ` (${row.target.source})` : ""}`
      : "info";
    const pass = row.pass === undefined ? "–" : row.pass ? "pass" : "**FAIL**";
    const spread = row.ratios ?? row.values;
    const range = spread
      ? `${show(spread.min, row.unit)} / ${show(spread.median, row.unit)} / ${show(spread.max, row.unit)}`
      : "";
    const targetSide = row.targetSide ? sideText(row.targetSide) : (row.detail ?? "");
    const baselineSide = row.baselineSide
      ? `${row.baseline}: ${sideText(row.baselineSide)}`
      : (row.baselineDetail ?? "");
    lines.push(
      `| ${row.title} | ${show(row.value, row.unit)} | ${target} | ${pass} | ${range} | ${targetSide} | ${baselineSide} |`,
    );
  }
  return lines.join("\n");
}
