/** @module valibot schemas of the gateway config the plugin reads: `hooks`, `agents.defaults.models`, `gateway.auth`. */
import * as v from "valibot";
import { ThinkingSchema } from "../vocabulary.js";
import { MAX_MAPPING_BODY_BYTES, MappingSchema } from "./mapping-schema.js";

const PositiveInt = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"));

export const AuthFailuresSchema = v.strictObject({
  limit: v.optional(PositiveInt, 20),
  windowSeconds: v.optional(PositiveInt, 60),
});

/** Duplicate deliveries: how long an accepted delivery id is remembered, and how many are kept. */
export const DedupeSchema = v.strictObject({
  windowSeconds: v.optional(PositiveInt, 86_400),
  maxEntries: v.optional(PositiveInt, 100_000),
});

/**
 * Where the state that several gateways must share lives: auth-failure counters, delivery ids and their first
 * answers. `memory` (the default) is this process's own; `redis` is shared by every gateway on the same server
 * and prefix.
 */
export const StoreSchema = v.variant(
  "kind",
  [
    v.strictObject({ kind: v.literal("memory") }),
    v.strictObject({
      kind: v.literal("redis"),
      /** `${REDIS_URL}` keeps a password out of the file. */
      url: v.pipe(
        v.string(),
        v.regex(
          /^rediss?:\/\/\S+$/,
          'must be a redis:// or rediss:// URL (for example "redis://127.0.0.1:6379")',
        ),
      ),
      keyPrefix: v.optional(v.string(), "hooks:"),
      /** A command not answered within this counts as the server being down. */
      timeoutMs: v.optional(v.pipe(PositiveInt, v.maxValue(60_000, "must be at most 60000")), 1_000),
    }),
  ],
  'must be { kind: "memory" } or { kind: "redis", url }',
);

/** The request journal: where accepted requests are recorded before their answer, and for how long. */
export const JournalSchema = v.strictObject({
  /** Off only for a deployment that accepts losing admitted requests in a crash. */
  enabled: v.optional(v.boolean(), true),
  /** Default: `hooks-journal` in the host's state directory; relative to the config file's directory. */
  dir: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  /** `batch`: one fsync shared by the requests that arrive together; `always`: one each; `off`: none. */
  fsync: v.optional(v.picklist(["batch", "always", "off"], 'must be "batch", "always" or "off"'), "batch"),
  /** A fraction of an hour is allowed (a test of retention that runs for minutes). */
  retainHours: v.optional(v.pipe(v.number(), v.minValue(0.001, "must be more than 0")), 72),
  /** Keep each accepted request's body and headers (credentials never), so it can be replayed. */
  storePayloads: v.optional(v.boolean(), true),
});

/**
 * What one client address (and everyone together) may hold before its request is known to be genuine, and how
 * many callers may wait for an agent turn. The address is the one failed authentications are counted against
 * (`trustedProxies` decides it).
 */
export const AdmissionSchema = v.strictObject({
  /**
   * Bytes of bodies being read on signed paths, not verified yet, from one address. A body is counted at its
   * declared length (at the path's limit when it declares none). One body over this is still read when the
   * address has nothing else in flight.
   */
  unverifiedBytesPerAddress: v.optional(PositiveInt, 16 * 1024 * 1024),
  /** The same for all addresses together; one body over it is still read when nothing else is in flight. */
  unverifiedBytes: v.optional(PositiveInt, 64 * 1024 * 1024),
  /**
   * Milliseconds a signed path's body has to arrive before its signature can be checked: shorter than
   * `bodyTimeoutMs`, which applies to bodies whose token was checked first.
   */
  unverifiedBodyTimeoutMs: v.optional(PositiveInt, 10_000),
  /** Callers of one address waiting for their agent turn (`waitForCompletion`); more get the admission answer. */
  waitersPerAddress: v.optional(PositiveInt, 16),
  /** Callers waiting for their agent turn, all addresses together. */
  waiters: v.optional(PositiveInt, 256),
});

/** Transforms in the worker pool: each worker's heap limit and how many run at once. */
export const TransformsSchema = v.strictObject({
  /**
   * A worker whose heap passes this is stopped, its request answered 500, and the worker replaced. A worker with
   * jiti and one small module loaded already holds about 14 MB, and the payload is copied into it.
   */
  maxMemoryMb: v.optional(v.pipe(PositiveInt, v.minValue(32, "must be at least 32")), 128),
  /** Default: the machine's available parallelism, at least 2. */
  maxWorkers: v.optional(v.pipe(PositiveInt, v.maxValue(64, "must be at most 64"))),
  /**
   * Names of variables a worker's transforms see from the host's environment, beside PATH, HOME, LANG and TZ; a
   * name that is not set is left out. Nothing else reaches them: not the variables behind tokens and secrets.
   */
  env: v.optional(
    v.array(
      v.pipe(
        v.string(),
        v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name (letters, digits, _)"),
      ),
    ),
    [],
  ),
});

/** What `hooks mailbox setup` writes; `hooks mailbox run` and the mailbox preset read it. */
export const MailboxConfigSchema = v.strictObject({
  host: v.optional(v.string()),
  port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
  user: v.optional(v.string()),
  /** Name of the environment variable holding the password; the password itself is never in the file. */
  passwordEnv: v.optional(v.string()),
  /** Path of a file holding the password. */
  passwordFile: v.optional(v.string()),
  security: v.optional(v.picklist(["tls", "starttls", "none"]), "tls"),
  mailbox: v.optional(v.string(), "INBOX"),
  hookUrl: v.optional(v.string()),
  includeBody: v.optional(v.boolean(), false),
  /** Per-message body cap in bytes; the preset's body limit is derived from it. */
  maxBytes: v.optional(PositiveInt, 20_000),
  pollSeconds: v.optional(PositiveInt, 60),
  model: v.optional(v.string()),
  thinking: v.optional(ThinkingSchema),
  allowUnsafeExternalContent: v.optional(v.boolean(), false),
});

export const HooksConfigSchema = v.strictObject({
  enabled: v.optional(v.boolean()),
  token: v.optional(v.string()),
  path: v.optional(v.string(), "/hooks"),
  maxBodyBytes: v.optional(
    v.pipe(PositiveInt, v.maxValue(MAX_MAPPING_BODY_BYTES, "must be at most 33554432 (32 MiB)")),
    262_144,
  ),
  bodyTimeoutMs: v.optional(PositiveInt, 30_000),
  presets: v.optional(v.array(v.picklist(["mailbox"], 'unknown preset (the one preset is "mailbox")')), []),
  mappings: v.optional(v.array(MappingSchema), []),
  /** Relative to the config file's directory. */
  transformsDir: v.optional(v.pipe(v.string(), v.minLength(1)), "hooks/transforms"),
  allowRequestSessionKey: v.optional(v.boolean(), true),
  allowedSessionKeyPrefixes: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), ["hook:"]),
  defaultSessionKey: v.optional(v.pipe(v.string(), v.minLength(1))),
  authFailures: v.optional(AuthFailuresSchema, {}),
  trustedProxies: v.optional(v.array(v.string()), []),
  dedupe: v.optional(DedupeSchema, {}),
  journal: v.optional(JournalSchema, {}),
  store: v.optional(StoreSchema, { kind: "memory" }),
  transforms: v.optional(TransformsSchema, {}),
  /** Whether a waiting caller (`waitForCompletion`) gets the agent's reply text, not only its kind. */
  exposeReplies: v.optional(v.boolean(), false),
  admission: v.optional(AdmissionSchema, {}),
  mailbox: v.optional(MailboxConfigSchema),
});

export const ModelsSchema = v.union([
  v.array(v.string()),
  v.record(v.string(), v.looseObject({ alias: v.optional(v.string()) })),
]);

/** The slice of the gateway config the plugin reads; everything else belongs to the gateway. */
export const PluginGatewayConfigSchema = v.looseObject({
  hooks: v.optional(HooksConfigSchema),
  agents: v.optional(
    v.looseObject({
      defaults: v.optional(v.looseObject({ models: v.optional(ModelsSchema) })),
    }),
  ),
  gateway: v.optional(
    v.looseObject({
      auth: v.optional(v.looseObject({ token: v.optional(v.string()) })),
    }),
  ),
});

export type HooksConfig = v.InferOutput<typeof HooksConfigSchema>;
export type HooksConfigInput = v.InferInput<typeof HooksConfigSchema>;
export type AdmissionConfig = v.InferOutput<typeof AdmissionSchema>;
export type TransformsConfig = v.InferOutput<typeof TransformsSchema>;
export type StoreConfig = v.InferOutput<typeof StoreSchema>;
export type JournalConfig = v.InferOutput<typeof JournalSchema>;
export type MailboxConfig = v.InferOutput<typeof MailboxConfigSchema>;
export type ModelsConfig = v.InferOutput<typeof ModelsSchema>;
export type PluginGatewayConfig = v.InferOutput<typeof PluginGatewayConfigSchema>;
