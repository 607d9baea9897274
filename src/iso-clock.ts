/** @module The current time as an ISO string, formatted once per millisecond: log lines and records share it. */

let lastMs = Number.NaN;
let lastIso = "";

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
