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
    serverCpuUsPerRequest: Math.round(side.serverCpuUsPerRequest),
    serverCpuShare: round(side.serverCpuShare),
    clientCpuShare: round(side.clientCpuShare),
    requests: side.requests,
  };
}

/**
 * Two rows from alternating pairs: throughput ratio (target/baseline, median of pairs) and p99 ratio.
 * `extra` lands in results.json (e.g. the gateway's log volume).
 */
export function pairRows({ id, title, pairs, rpsTarget, p99Target = 2, baselineName, extra = {} }) {
  const targetSide = sideJson(sideSummary(pairs.map((pair) => pair.target)));
  const baselineSide = sideJson(sideSummary(pairs.map((pair) => pair.baseline)));
  const runs = pairs.map((pair) => ({
    target: sideJson({ ...pair.target, requests: pair.target.requests }),
    baseline: sideJson({ ...pair.baseline, requests: pair.baseline.requests }),
    rpsRatio: round(pair.rpsRatio, 3),
    p99Ratio: round(pair.p99Ratio, 3),
  }));
  const rpsRatios = roundStats(
    pairs.map((pair) => pair.rpsRatio),
    3,
  );
  const p99Ratios = roundStats(
    pairs.map((pair) => pair.p99Ratio),
    3,
  );
  const cpuRatio = round(baselineSide.serverCpuUsPerRequest / targetSide.serverCpuUsPerRequest, 3);
  const common = { baseline: baselineName, targetSide, baselineSide, runs, ...extra };
  const rpsGoal = rpsTarget ? { op: ">=", value: rpsTarget } : undefined;
  const p99Goal = p99Target ? { op: "<=", value: p99Target } : undefined;
  return [
    {
      id: `${id}.throughput`,
      title: `${title}: throughput`,
      kind: rpsGoal ? "ratio" : "diagnostic",
      value: rpsRatios.median,
      unit: "x",
      target: rpsGoal,
      pass: judge(rpsRatios.median, rpsGoal),
      ratios: rpsRatios,
      // Server CPU per request, baseline over target: the same comparison without the client's speed as a cap.
      cpuEfficiencyRatio: cpuRatio,
      ...common,
    },
    {
      id: `${id}.p99`,
      title: `${title}: p99 latency`,
      kind: p99Goal ? "ratio" : "diagnostic",
      value: p99Ratios.median,
      unit: "x",
      target: p99Goal,
      pass: judge(p99Ratios.median, p99Goal),
      ratios: p99Ratios,
      ...common,
    },
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
  return `${fmtRps(side.rps)} req/s, p99 ${side.p99Ms.toFixed(1)} ms, ${side.serverCpuUsPerRequest} µs CPU/req`;
}

/** The Markdown table the runner prints and the README's Performance section carries. */
export function formatTable(rows) {
  const lines = [
    "| Scenario | Result | Target | Pass | min / median / max | Target side | Baseline side |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const target = row.target ? `${row.target.op} ${show(row.target.value, row.unit)}` : "info";
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
