/** @module The processes a transform started, found by the mark in their environment: they keep it whatever session or parent they end up with. */
import { readdir, readFile } from "node:fs/promises";

/**
 * The variable every process a transform starts gets, holding its pool's and its worker's mark. A child inherits it
 * from its parent, so it survives `setsid` and a double fork, where the process group and the parent do not.
 */
export const CHILD_MARK_VARIABLE = "HOOKS_TRANSFORM_CHILD";

/** A fork between one look and the kill makes a process the look missed: look again until one finds none. */
const MAX_SWEEPS = 5;

/** `NAME=value` of the mark, as `/proc/<pid>/environ` lists it. */
export function markEntry(mark: string): string {
  return `${CHILD_MARK_VARIABLE}=${mark}`;
}

/** The environment a process was started with, NUL-separated; undefined when it is gone or not this user's. */
async function environOf(pid: string): Promise<string | undefined> {
  try {
    return await readFile(`/proc/${pid}/environ`, "latin1");
  } catch {
    return undefined;
  }
}

/**
 * Ends (SIGKILL) each process whose environment holds a variable `CHILD_MARK_VARIABLE` whose value `matches`, as
 * soon as it is found: a pid listed and killed after the whole walk could have ended and been reused meanwhile.
 * Returns how many it ended.
 */
async function killMarked(matches: (value: string) => boolean): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return 0;
  }
  const prefix = `${CHILD_MARK_VARIABLE}=`;
  let ended = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = await environOf(entry);
    if (environ === undefined || !environ.includes(prefix)) continue;
    const marked = environ
      .split("\0")
      .some((pair) => pair.startsWith(prefix) && matches(pair.slice(prefix.length)));
    if (!marked) continue;
    try {
      process.kill(Number(entry), "SIGKILL");
      ended++;
    } catch {
      // Gone meanwhile.
    }
  }
  return ended;
}

/**
 * Ends (SIGKILL) every process of this user whose environment carries a mark that `matches`, and those they fork
 * meanwhile. Linux only (elsewhere there is no /proc to read, and this finds nothing). A process that cleared its
 * environment, or runs as another user, is not found: transforms are isolated for robustness, not sandboxed.
 */
export async function endMarkedProcesses(matches: (value: string) => boolean): Promise<void> {
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    if ((await killMarked(matches)) === 0) return;
  }
}
