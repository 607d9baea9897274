/** @module Reads a V8 .cpuprofile: self and inclusive time per function, self time per area, cropped to a window. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { HOOKS_BIN, ROOT } from "./processes.mjs";

/** This checkout and the build under test (BENCH_HOOKS_BIN may be another checkout): both shown as `dist/...`. */
const ROOT_URLS = [`file://${ROOT}`, `file://${path.resolve(HOOKS_BIN, "..", "..")}/`];

function shortUrl(url) {
  if (!url) return "";
  const root = ROOT_URLS.find((prefix) => url.startsWith(prefix));
  let short = root ? url.slice(root.length) : url;
  short = short.replace(/^.*\/node_modules\//, "node_modules/");
  return short;
}

/** Where a function lives, for "where does the time go" at a glance. */
function areaOf(callFrame) {
  const url = callFrame.url;
  if (!url) {
    const name = callFrame.functionName;
    if (name === "(garbage collector)" || name === "(program)" || name === "(idle)") return name;
    return "native / V8 builtins";
  }
  const short = shortUrl(url);
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(short);
  if (pkg) return `npm: ${pkg[1]}`;
  if (short.startsWith("node:")) {
    const mod = short.replace(/^node:(internal\/)?/, "");
    return `node: ${mod.replace(/\/.*$/, "")}`;
  }
  return short;
}

function keyOf(callFrame) {
  const name = callFrame.functionName || "(anonymous)";
  if (!callFrame.url) return name;
  return `${name} ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;
}

/**
 * Self time per function and per area, and inclusive time per function (a function counted once per stack,
 * however deep it recurses), over the samples from the first to the last whose stack matches `windowFrom`,
 * or only the last `lastMs` of them. `between: { fromUs, toUs }` takes the samples in that span instead (the
 * times of another thread's window: a process's threads share V8's clock), for a worker thread's profile.
 */
export function analyseProfile(file, { windowFrom, lastMs, between } = {}) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const stackKeys = (id) => {
    const keys = [];
    for (let at = id; at !== undefined; at = parent.get(at)) keys.push(keyOf(byId.get(at).callFrame));
    return keys;
  };

  // Sample times; the window starts at the first sample whose stack matches windowFrom (e.g. the HTTP server).
  const times = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  let first = 0;
  let last = profile.samples.length - 1;
  if (windowFrom) {
    const matches = (i) => stackKeys(profile.samples[i]).some((key) => windowFrom.test(key));
    while (first < last && !matches(first)) first++;
    while (last > first && !matches(last)) last--;
  }
  // Only the last `lastMs` of the window: the measured run, not the warm-up before it.
  if (lastMs !== undefined) while (first < last && times[first] < times[last] - lastMs * 1000) first++;
  if (between) {
    first = 0;
    last = times.length - 1;
    while (first < last && times[first] < between.fromUs) first++;
    while (last > first && times[last] > between.toUs) last--;
  }

  const self = new Map();
  const inclusive = new Map();
  const areas = new Map();
  let busy = 0;
  let idle = 0;
  for (let i = first; i <= last; i++) {
    const weight = (times[i + 1] ?? times[i]) - times[i];
    const node = byId.get(profile.samples[i]);
    if (node.callFrame.functionName === "(idle)") {
      idle += weight;
      continue;
    }
    busy += weight;
    const key = keyOf(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + weight);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + weight);
    for (const stackKey of new Set(stackKeys(node.id))) {
      inclusive.set(stackKey, (inclusive.get(stackKey) ?? 0) + weight);
    }
  }
  const ranked = (map) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 100) / 10,
        percent: Math.round((us / busy) * 1000) / 10,
      }));
  return {
    windowMs: Math.round((times[last] - times[first]) / 1000),
    fromUs: times[first],
    toUs: times[last],
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    self: ranked(self),
    inclusive: ranked(inclusive),
    areas: ranked(areas),
  };
}
