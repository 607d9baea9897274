/** @module Atomic file replacement (temp file + fsync + rename) for the state file and the rewritten gateway config. */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";

/** Temp file in the same directory, flushed, then renamed over the target: a crash leaves the old or the new file, never half of one. */
export async function writeFileAtomically(file: string, text: string, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "w", mode);
    try {
      // open() applies the umask; the caller's mode (e.g. the replaced file's) is what the file must end with.
      await handle.chmod(mode);
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

/** Makes the rename itself durable; some filesystems refuse to open a directory, which only costs durability. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}
