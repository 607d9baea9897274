/** @module Self and inclusive time of a .cpuprofile, and the longest stretch the event loop was held (consecutive non-idle samples). Usage: node profile-top.mjs <file> */
import { readFileSync } from "node:fs";

const p = JSON.parse(readFileSync(process.argv[2], "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
const incl = new Map();
const dt = p.timeDeltas;
for (let i = 0; i < p.samples.length; i++) {
  const ms = (dt[i + 1] ?? 0) / 1000;
  let id = p.samples[i];
  const n = byId.get(id);
  const name = (n) =>
    `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*\/(dist|node_modules)\//, "$1/")}:${n.callFrame.lineNumber}`;
  self.set(name(n), (self.get(name(n)) ?? 0) + ms);
  const seen = new Set();
  while (id !== undefined) {
    const k = name(byId.get(id));
    if (!seen.has(k)) {
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + ms);
    }
    id = parent.get(id);
  }
}
const top = (m, n) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${v.toFixed(0).padStart(6)} ms  ${k}`)
    .join("\n");
console.log("SELF\n" + top(self, 20));
console.log("INCLUSIVE (dist)\n" + top(new Map([...incl].filter(([k]) => k.includes("dist/"))), 30));
// Longest run of consecutive non-idle samples: the longest time the event loop was held.
let longest = 0,
  run = 0,
  busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  const n = byId.get(p.samples[i]);
  const ms = (dt[i + 1] ?? 0) / 1000;
  if (n.callFrame.functionName === "(idle)") {
    run = 0;
    continue;
  }
  run += ms;
  busy += ms;
  longest = Math.max(longest, run);
}
console.log(`BUSY ${busy.toFixed(0)} ms, LONGEST ${longest.toFixed(0)} ms`);
