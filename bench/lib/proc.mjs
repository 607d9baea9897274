/** @module Reads a process's resident memory and CPU time from /proc (shared by the bench and its load worker). */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let clockTicks;
/** Clock ticks per second of /proc/<pid>/stat's times (`getconf CLK_TCK`, 100 on Linux almost everywhere). */
export function ticksPerSecond() {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** A field of /proc/<pid>/status counted in kB (`VmRSS`, `VmHWM`, ...), or undefined when the process is gone. */
export function readStatusKb(pid, field) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in bytes (VmRSS), or undefined when it is gone. */
export function readRss(pid) {
  const kb = readStatusKb(pid, "VmRSS");
  return kb === undefined ? undefined : kb * 1024;
}

/** CPU time (user + system, every thread) a process has used so far, in milliseconds. */
export function readCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces; the fields that follow it are fixed (utime is the 14th, stime the 15th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
  } catch {
    return undefined;
  }
}
