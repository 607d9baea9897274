/** @module The journal's durable file writes: a file replaced atomically, and a new name's directory entry synced. */
import { closeSync, fsyncSync, openSync } from "node:fs";
import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/**
 * Replaces `file` atomically: `contents` (or what `fill` writes through the handle) go to a temporary file beside
 * it, which is synced, renamed over it, and the directory synced. A crash at any moment leaves the old file or the
 * new one, never a torn one. Every step is asynchronous: the files are large (a checkpoint of 100,000 delivery ids,
 * a rewritten segment of up to 64 MiB), and their writes and syncs must not hold the event loop (bench/PROFILE.md).
 */
export async function replaceFile(
  file: string,
  contents: string | Buffer | ((handle: FileHandle) => Promise<void>),
): Promise<void> {
  const temporary = `${file}.tmp`;
  try {
    const handle = await open(temporary, "w", 0o600);
    try {
      if (typeof contents === "function") await contents(handle);
      else await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectoryAsync(path.dirname(file));
}

/**
 * Syncs a directory, so that a file created or renamed in it keeps its name after a power cut (syncing the file
 * itself does not make its directory entry durable). Synchronous for the append log, which opens its files in the
 * turn that decides to.
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

/** `syncDirectory` without holding the event loop. */
async function syncDirectoryAsync(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // As in syncDirectory: refused by some file systems, at a cost in durability only.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
