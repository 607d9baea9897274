/** @module Reloads the gateway's config: reads it again, checks all of it, swaps in what may change live and logs one line; never two at once. */
import { isDeepStrictEqual } from "node:util";
import {
  type ConfigIssue,
  configuredAgents,
  formatIssue,
  type HookPlugin,
  type HooksReload,
  type HooksStatus,
  type HostAgents,
} from "../index.js";
import { type ConfigWatch, watchConfigFile } from "./config-watch.js";
import type { GatewaySections } from "./gateway-config.js";
import { parseGatewaySections } from "./gateway-config.js";
import type { GatewayLogger } from "./logger.js";

/** Where a gateway's config comes from, so that a reload can read it again. */
export interface ConfigSource {
  /** The config file: named in log lines, and watched unless `watch` is false. */
  file: string;
  /** Reads it again as at start (the same environment, `${VAR}` substituted): the config and the file's problems. */
  load(): { config: unknown; issues: readonly ConfigIssue[] };
  watch?: boolean;
  /** Quiet time after the file's last change before it is read (default 200 ms). */
  debounceMs?: number;
}

/** What a reload came to (also logged): problems, with the running config kept; or the new config in force. */
export type ReloadOutcome =
  | { applied: false; issues: ConfigIssue[] }
  | {
      applied: true;
      /** The plugin's fields that changed, by name. */
      changed: string[];
      /** Fields that changed but keep their running values until a restart. */
      restartNeeded: string[];
      /** Mappings the plugin now serves. */
      mappings: number;
    };

export interface ReloadTarget {
  plugin: HookPlugin;
  /** The sections the gateway runs on: none of them changes without a restart. */
  sections: GatewaySections;
  /** The agents the plugin was registered with: the host's, fixed until a restart. */
  agents: HostAgents;
  env: NodeJS.ProcessEnv;
  /** What a secret's relative `{ file }` is relative to. */
  configDir: string;
  logger: GatewayLogger;
  /** Told once a new config is in force, to update what the gateway reads of the plugin's slice. */
  applied(config: unknown, status: HooksStatus | undefined): void;
}

export interface ConfigReloader {
  /**
   * Reads the config again and swaps it in, or keeps the running one and logs why. A reload asked for while one
   * runs waits for it; every ask that comes meanwhile is served by one more reload, which reads the latest file.
   */
  reload(trigger: string): Promise<ReloadOutcome>;
  /** Stops watching the file and waits for a reload under way; later asks are refused. */
  close(): Promise<void>;
}

const STOPPING: ReloadOutcome = {
  applied: false,
  issues: [{ path: "", message: "the gateway is stopping" }],
};

type ReloadablePlugin = HookPlugin & { prepareReload(config: unknown): Promise<HooksReload> };

function canReload(plugin: HookPlugin): plugin is ReloadablePlugin {
  return "prepareReload" in plugin && typeof plugin.prepareReload === "function";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The paths (`server.port`, `runner.kind`) where two configs differ; arrays compare whole. */
function changedPaths(before: unknown, after: unknown, at = ""): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) => changedPaths(before[key], after[key], at ? `${at}.${key}` : key));
  }
  return isDeepStrictEqual(before, after) ? [] : [at];
}

/** A new config read and checked whole, ready to swap in; or the problems that keep the running one. */
type CheckedConfig =
  | { ok: false; issues: ConfigIssue[] }
  | { ok: true; config: unknown; prepared: HooksReload; restartNeeded: string[] };

/** Reads the config again and checks all of it: the file, the gateway's sections and the plugin's slice. */
async function readAndCheck(source: ConfigSource, target: ReloadTarget): Promise<CheckedConfig> {
  const { plugin } = target;
  if (!canReload(plugin)) {
    return {
      ok: false,
      issues: [
        { path: "", message: "this gateway's plugin cannot take a new config while running: restart it" },
      ],
    };
  }
  const next = source.load();
  const gateway = parseGatewaySections(next.config, target.env, target.configDir);
  const prepared = await plugin.prepareReload(next.config);
  const issues = [...next.issues, ...gateway.issues, ...prepared.issues];
  if (issues.length > 0) return { ok: false, issues };
  const restartNeeded = [...changedPaths(target.sections, gateway.sections), ...prepared.restartNeeded];
  if (!isDeepStrictEqual(configuredAgents(next.config), target.agents)) restartNeeded.push("agents");
  return { ok: true, config: next.config, prepared, restartNeeded };
}

/** Logs that the running config stays, and why. */
function logRefused(logger: GatewayLogger, file: string, trigger: string, issues: ConfigIssue[]): void {
  // One line, whatever the number of problems: paths and messages only, never a value of the file.
  logger.error(
    `config not reloaded (${trigger}): ${issues.length} problem(s), still serving the previous config: ${issues.map(formatIssue).join("; ")}`,
    { file, problems: issues.length },
  );
}

/** Logs a config now in force: what changed, how many mappings it serves (and before, when that moved). */
function logApplied(
  logger: GatewayLogger,
  file: string,
  trigger: string,
  outcome: ReloadOutcome & { applied: true },
  before: number | undefined,
): void {
  const { restartNeeded, mappings } = outcome;
  if (restartNeeded.length > 0) {
    logger.warn(
      `config changes that need a restart were not applied, their running values stay: ${restartNeeded.join(", ")}`,
      { file },
    );
  }
  const count =
    mappings === before ? `${mappings} mapping(s)` : `${mappings} mapping(s) (was ${before ?? 0})`;
  const changed = outcome.changed.length > 0 ? outcome.changed.join(", ") : "nothing";
  logger.info(`config reloaded (${trigger}): ${count}; changed: ${changed}`, { file, mappings });
}

/** Watches the config file unless `source.watch` is false: a change asks for a reload. */
function watchSource(
  source: ConfigSource,
  logger: GatewayLogger,
  changed: () => void,
): ConfigWatch | undefined {
  if (source.watch === false) return undefined;
  return watchConfigFile(source.file, changed, {
    ...(source.debounceMs !== undefined && { debounceMs: source.debounceMs }),
    onError: (error) =>
      logger.warn(`no longer watching the config file (${error.message}); SIGHUP still reloads it`, {
        file: source.file,
      }),
  });
}

export function createConfigReloader(source: ConfigSource, target: ReloadTarget): ConfigReloader {
  const { logger } = target;
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();
  let waiting: Promise<ReloadOutcome> | undefined;
  let mappings = statusOf(target.plugin)?.mappings.length;

  const refuse = (trigger: string, issues: ConfigIssue[]): ReloadOutcome => {
    logRefused(logger, source.file, trigger, issues);
    return { applied: false, issues };
  };

  async function reloadOnce(trigger: string): Promise<ReloadOutcome> {
    const checked = await readAndCheck(source, target);
    if (!checked.ok) return refuse(trigger, checked.issues);
    const { prepared, restartNeeded } = checked;
    prepared.apply();
    target.applied(checked.config, prepared.status);
    const now = prepared.status?.mappings.length ?? 0;
    const outcome = { applied: true as const, changed: prepared.changed, restartNeeded, mappings: now };
    logApplied(logger, source.file, trigger, outcome, mappings);
    mappings = now;
    return outcome;
  }

  const reloadNow = (trigger: string) =>
    reloadOnce(trigger).catch((error: unknown) =>
      refuse(trigger, [{ path: "", message: (error as Error)?.message ?? String(error) }]),
    );

  const reload = (trigger: string): Promise<ReloadOutcome> => {
    if (closed) return Promise.resolve(STOPPING);
    if (waiting) return waiting;
    const run = chain.then(() => {
      // From here on a new ask needs a new reload: this one may already have read the file.
      waiting = undefined;
      return closed ? STOPPING : reloadNow(trigger);
    });
    waiting = run;
    chain = run;
    return run;
  };
  const watch = watchSource(source, logger, () => void reload("file changed"));

  return {
    reload,
    async close() {
      closed = true;
      watch?.close();
      await chain;
    },
  };
}

/** What the plugin says it serves, when it is one that says (a `createHooksPlugin` instance). */
export function statusOf(plugin: HookPlugin): HooksStatus | undefined {
  return "status" in plugin && typeof plugin.status === "function"
    ? (plugin.status() as HooksStatus | undefined)
    : undefined;
}
