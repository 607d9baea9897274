/** @module The two steps every durable file write in the journal shares: every byte written, and a new name's directory entry synced. */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";

/** Writes all of `bytes`: a single write call may take only part of them. */
export function writeFully(fd: number, bytes: Buffer): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
}

/**
 * Syncs a directory, so that a file created or renamed in it keeps its name after a power cut (syncing the file
 * itself does not make its directory entry durable).
 */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the file's own data is synced all the same, and the name is
    // as durable as that file system makes it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
