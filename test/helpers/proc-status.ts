/** @module A running process's memory figures, read from Linux's `/proc/<pid>/status`. */
import { readFileSync } from "node:fs";

/** A `/proc/<pid>/status` figure in kB (VmRSS, VmHWM). */
export function procStatusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1]);
}
