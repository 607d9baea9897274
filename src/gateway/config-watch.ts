/** @module Watches the config file for changes, debounced: an editor's save is several writes (or a new file renamed over the old), one reload. */
import { type FSWatcher, watch } from "node:fs";
import path from "node:path";

/** Quiet time after the last event before the file counts as saved: editors write a file in a few steps. */
const CONFIG_WATCH_DEBOUNCE_MS = 200;

export interface ConfigWatch {
  close(): void;
}

export interface ConfigWatchOptions {
  debounceMs?: number;
  /** Told when the watch cannot go on (the directory was removed): the gateway still reloads on SIGHUP. */
  onError?: (error: Error) => void;
}

/**
 * Calls `onChange` once the file has been quiet for `debounceMs` after a change. The directory is watched, not the
 * file: an editor that saves by writing a new file and renaming it over the old one replaces the file a watch on it
 * would follow.
 */
export function watchConfigFile(
  file: string,
  onChange: () => void,
  options: ConfigWatchOptions = {},
): ConfigWatch {
  const debounceMs = options.debounceMs ?? CONFIG_WATCH_DEBOUNCE_MS;
  const name = path.basename(file);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  const close = () => {
    clearTimeout(timer);
    watcher?.close();
    watcher = undefined;
  };
  try {
    // Not persistent: a watch alone must not keep a stopped gateway's process alive.
    watcher = watch(path.dirname(file), { persistent: false }, (_event, changed) => {
      // Some platforms do not say which file changed: then any change in the directory may be this one.
      if (changed !== null && changed !== name) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
  } catch (error) {
    options.onError?.(error as Error);
    return { close };
  }
  watcher.on("error", (error) => {
    close();
    options.onError?.(error);
  });
  return { close };
}
