/** @module One `hooks mailbox run` per state directory: a pid lock file, taken over when its owner is gone. */
import { mkdir, open, readFile, rm } from "node:fs/promises";
import path from "node:path";

export interface StateLock {
  readonly file: string;
  release(): Promise<void>;
}

export const LOCK_FILE_NAME = "mailbox.lock";

/**
 * Two helpers sharing a state directory would each deliver the same messages. The lock holds the owner's pid;
 * a lock whose process no longer exists (killed with SIGKILL, machine rebooted) is stale and taken over.
 */
export async function acquireStateLock(stateDir: string, pid: number = process.pid): Promise<StateLock> {
  const file = path.resolve(stateDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.writeFile(`${pid}\n`);
      await handle.close();
      return {
        file,
        async release() {
          // Only our own lock is removed; a successor's must survive a late release.
          if ((await readOwner(file)) === pid) await rm(file, { force: true });
        },
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        await mkdir(path.dirname(file), { recursive: true });
        continue;
      }
      if (code !== "EEXIST") throw error;
    }
    const owner = await readOwner(file);
    if (owner !== undefined && owner !== pid && isAlive(owner)) {
      throw new Error(
        `another "hooks mailbox run" (pid ${owner}) already uses ${path.dirname(file)}; two helpers would deliver every message twice`,
      );
    }
    await rm(file, { force: true });
  }
  throw new Error(`cannot take the lock ${file}`);
}

async function readOwner(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(file, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
