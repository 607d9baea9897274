/** @module Syncs the state database's write-ahead log to disk on request, one sync shared by everyone waiting. */
import { closeSync, fdatasync, openSync } from "node:fs";

/**
 * Makes committed transactions durable on request. The database runs `synchronous = NORMAL`, where a commit is
 * not synced, which is right for most writes; when the journal is about to mark a request done, what its events
 * wrote must survive a power cut too, so the WAL file is synced then. Requests that arrive while a sync runs share
 * the next one (a commit made during a sync may not be covered by it).
 */
export class WalSync {
  private fd: number | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly walFile: string) {}

  sync(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.syncOnce().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.sync();
      });
    return this.next;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private syncOnce(): Promise<void> {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.walFile, "r");
      } catch (error) {
        // No WAL file yet: nothing has been committed that a sync could keep.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return Promise.resolve();
        return Promise.reject(error);
      }
    }
    const fd = this.fd;
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }
}
