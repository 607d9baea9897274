/** @module valibot schemas of the gateway config the plugin reads: `hooks`, `agents.defaults.models`, `gateway.auth`. */
import * as v from "valibot";
import { ThinkingSchema } from "../vocabulary.js";
import { HooksLimitsSchema } from "./limits-schema.js";
import { MAX_MAPPING_BODY_BYTES, MappingSchema } from "./mapping-schema.js";
import { secretField } from "./secret-schema.js";

// Each field's `v.description` is its entry in docs/configuration.md and in the JSON Schemas (`npm run schemas`).

const PositiveInt = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be at least 1"));

export const AuthFailuresSchema = v.strictObject({
  limit: v.pipe(
    v.optional(PositiveInt, 20),
    v.description(
      "Failed authentications one client address may make within the window; past it the address gets 429 with `Retry-After` until the window ends. A correct token is accepted even then and clears the count; a correct signature clears it only below the limit, since a throttled address's signed request gets 429 before its signature is checked.",
    ),
  ),
  windowSeconds: v.pipe(v.optional(PositiveInt, 60), v.description("Length of the window, in seconds.")),
});

export const DedupeSchema = v.strictObject({
  windowSeconds: v.pipe(
    v.optional(PositiveInt, 86_400),
    v.description(
      "Seconds an accepted delivery id is remembered: at least twice the largest `verify.toleranceSeconds`. In Redis each id expires at the end of its window.",
    ),
  ),
  maxEntries: v.pipe(
    v.optional(PositiveInt, 100_000),
    v.description(
      "Most delivery ids remembered, the oldest going first. It bounds the memory store, and the copy a Redis gateway keeps to refill an emptied Redis.",
    ),
  ),
});

export const StoreSchema = v.variant(
  "kind",
  [
    v.pipe(
      v.strictObject({ kind: v.literal("memory") }),
      v.description("This process's own memory: each gateway counts and remembers alone."),
    ),
    v.pipe(
      v.strictObject({
        kind: v.literal("redis"),
        url: v.pipe(
          secretField(
            v.pipe(
              v.string(),
              v.regex(
                /^rediss?:\/\/\S+$/,
                'must be a redis:// or rediss:// URL (for example "redis://127.0.0.1:6379")',
              ),
            ),
          ),
          v.description(
            `\`redis://[user:password@]host[:port][/db]\`, or \`rediss://…\` for TLS; a secret field, since it may carry a password. Logs, the start-up banner and \`hooks check\` show it without user name and password.`,
          ),
        ),
        keyPrefix: v.pipe(
          v.optional(v.string(), "hooks:"),
          v.description("Put before every key; two deployments on one server take two prefixes."),
        ),
        timeoutMs: v.pipe(
          v.optional(v.pipe(PositiveInt, v.maxValue(60_000, "must be at most 60000")), 1_000),
          v.description(
            "A command not answered within this many milliseconds fails, and the request is handled as if Redis were down.",
          ),
        ),
        allowEviction: v.pipe(
          v.optional(v.boolean(), false),
          v.description(
            "Start even when the server's `maxmemory-policy` may evict keys (anything but `noeviction`), with a warning; by default such a server stops the start. An evicted delivery id is still answered as a duplicate by the gateway that accepted it (from its own memory), but a copy reaching another gateway may be accepted again ([Durability and eviction](store.md#durability-and-eviction)).",
          ),
        ),
      }),
      v.description("A Redis server, shared by every gateway that uses the same server and `keyPrefix`."),
    ),
  ],
  'must be { kind: "memory" } or { kind: "redis", url }',
);

export const JournalSchema = v.strictObject({
  enabled: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "`false` runs without a journal: an accepted request whose process dies before its events were taken is lost.",
    ),
  ),
  dir: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
    v.description(
      "Where the segment files go, relative to the config file's directory. Unset: `hooks-journal` in the host's state directory.",
    ),
  ),
  fsync: v.pipe(
    v.optional(v.picklist(["batch", "always", "off"], 'must be "batch", "always" or "off"'), "batch"),
    v.description(
      "`batch`: the requests answered together share one `fdatasync`, and their answers leave after it. `always`: one `fdatasync` per request. `off`: written before the answer, never synced: survives a crash of the process, not of the machine.",
    ),
  ),
  retainHours: v.pipe(
    v.optional(v.pipe(v.number(), v.minValue(0.001, "must be more than 0")), 72),
    v.description(
      "Finished requests older than this are removed, a whole segment at a time; a fraction of an hour is allowed.",
    ),
  ),
  storePayloads: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "Keep each accepted request's body and headers (credentials never), so `hooks journal replay` can replay it; `false` keeps neither.",
    ),
  ),
  refusedPerMinute: v.pipe(
    v.optional(
      v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(0, "must be 0 or more")),
      60,
    ),
    v.description(
      "Refused requests listed per client address per minute before any credential was accepted (401, 405, 429, …): the rest are counted, and the next one listed says how many were left out. `0` lists none of them.",
    ),
  ),
  refusedTotalPerMinute: v.pipe(
    v.optional(
      v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(0, "must be 0 or more")),
      600,
    ),
    v.description(
      "The same for all client addresses together: a flood from many addresses lists this many a minute at most; the rest are counted and the count logged once a minute (a warning). `0` lists none of them.",
    ),
  ),
  refusedBytesPerMinute: v.pipe(
    v.optional(
      v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(0, "must be 0 or more")),
      1024 * 1024,
    ),
    v.description(
      "Bytes of those lines a minute, all addresses together (one line may pass it); past it they are counted like the lines past `refusedTotalPerMinute`.",
    ),
  ),
});

export const AdmissionSchema = v.strictObject({
  unverifiedBytesPerAddress: v.pipe(
    v.optional(PositiveInt, 16 * 1024 * 1024),
    v.description(
      "Bytes of bodies one client address may have in flight on signed paths, read before their signature can be checked. Room for a body (its declared `Content-Length`, or the path's limit when it declares none) is taken before a byte is read, else `429 CLIENT_BUSY`. One body larger than this is still read when the address holds nothing else.",
    ),
  ),
  unverifiedBytes: v.pipe(
    v.optional(PositiveInt, 64 * 1024 * 1024),
    v.description(
      "The same for all addresses together, else `503 SERVER_BUSY`. One body larger than this is still read when nothing else is held.",
    ),
  ),
  unverifiedBodyTimeoutMs: v.pipe(
    v.optional(PositiveInt, 10_000),
    v.description(
      "Milliseconds a signed path's body has to arrive before its signature can be checked (or `bodyTimeoutMs`, if shorter), else 408.",
    ),
  ),
  waitersPerAddress: v.pipe(
    v.optional(PositiveInt, 16),
    v.description(
      "Callers of one address holding their answer for their agent turn ([Waiting for the outcome](http.md#waiting-for-the-outcome)); one more gets the admission answer at once, and its turn runs all the same.",
    ),
  ),
  waiters: v.pipe(v.optional(PositiveInt, 256), v.description("The same for all addresses together.")),
});

export const TransformsSchema = v.strictObject({
  maxMemoryMb: v.pipe(
    v.optional(v.pipe(PositiveInt, v.minValue(32, "must be at least 32")), 128),
    v.description(
      "Heap limit of each worker, in MB: a worker that passes it is stopped, its request answered 500, and the worker replaced. A worker with jiti and one small module loaded already holds about 14 MB, and the payload is copied into it.",
    ),
  ),
  maxWorkers: v.pipe(
    v.optional(v.pipe(PositiveInt, v.maxValue(64, "must be at most 64"))),
    v.description(
      "Transforms that run at once; more wait for a worker. Unset: the machine's available parallelism, at least 2.",
    ),
  ),
  env: v.pipe(
    v.optional(
      v.array(
        v.pipe(
          v.string(),
          v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name (letters, digits, _)"),
        ),
      ),
      [],
    ),
    v.description(
      "Names of the variables a worker's transforms see from the host's environment, beside `PATH`, `HOME`, `LANG` and `TZ`; a name that is not set is left out. Nothing else is in their `process.env`: not the variables behind tokens and secrets. This is no barrier: a transform runs in the gateway's process and can read its whole environment through `/proc` on Linux; give secrets as `{ file }` to keep them out of it.",
    ),
  ),
});

export const MailboxConfigSchema = v.strictObject({
  host: v.pipe(v.optional(v.string()), v.description("IMAP server; required by `hooks mailbox run`.")),
  port: v.pipe(
    v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
    v.description('IMAP port. Unset: 993 with `security: "tls"`, else 143.'),
  ),
  user: v.pipe(v.optional(v.string()), v.description("IMAP user name; required by `hooks mailbox run`.")),
  passwordEnv: v.pipe(
    v.optional(v.string()),
    v.description(
      "Name of the environment variable holding the password, which is never in the file. One of `passwordEnv` and `passwordFile`.",
    ),
  ),
  passwordFile: v.pipe(
    v.optional(v.string()),
    v.description("Path of a file holding the password, relative to the config file's directory."),
  ),
  security: v.pipe(
    v.optional(v.picklist(["tls", "starttls", "none"]), "tls"),
    v.description(
      "`tls`: TLS from the first byte; `starttls`: a plain connection upgraded with STARTTLS; `none`: no encryption, only for a server on the same machine.",
    ),
  ),
  mailbox: v.pipe(v.optional(v.string(), "INBOX"), v.description("The mailbox (folder) to watch.")),
  hookUrl: v.pipe(
    v.optional(v.string()),
    v.description(
      "Where the helper posts. Unset: `http://<server.host>:<server.port><hooks.path>/mailbox` of the local gateway, which needs a fixed `server.port`.",
    ),
  ),
  includeBody: v.pipe(
    v.optional(v.boolean(), false),
    v.description("Also send each message's plain-text body, cut to `maxBytes`."),
  ),
  maxBytes: v.pipe(
    v.optional(PositiveInt, 20_000),
    v.description(
      "Per-message body cap in bytes; the preset's body limit follows from it, so a full batch fits.",
    ),
  ),
  pollSeconds: v.pipe(
    v.optional(PositiveInt, 60),
    v.description("How often the helper looks at the mailbox when IMAP IDLE is silent, in seconds."),
  ),
  model: v.pipe(v.optional(v.string()), v.description("The model of the preset's agent turns.")),
  thinking: v.pipe(
    v.optional(ThinkingSchema),
    v.description("The thinking level of the preset's agent turns."),
  ),
  allowUnsafeExternalContent: v.pipe(
    v.optional(v.boolean(), false),
    v.description(
      "Dangerous: no safety wrapper around the mail in the preset's turns. Mail is written by strangers, and the wrapper is what tells the model that its text is data, not instructions.",
    ),
  ),
});

export const HooksConfigSchema = v.strictObject({
  enabled: v.pipe(
    v.optional(v.boolean()),
    v.description("Only `true` exposes the intake; otherwise no route is registered."),
  ),
  token: v.pipe(
    v.optional(secretField(v.string())),
    v.description(
      "The bearer token callers send. Required when `enabled` is `true`; must differ from `gateway.auth.token`; under 16 characters is refused, under 24 logs a warning; never logged. `hooks token` makes one.",
    ),
  ),
  path: v.pipe(
    v.optional(v.string(), "/hooks"),
    v.description(
      "Where the intake answers. A leading `/` is added and a trailing `/` removed; `/` alone, `?`, `#` and spaces are refused.",
    ),
  ),
  maxBodyBytes: v.pipe(
    v.optional(
      v.pipe(PositiveInt, v.maxValue(MAX_MAPPING_BODY_BYTES, "must be at most 33554432 (32 MiB)")),
      262_144,
    ),
    v.description(
      "The body limit, in bytes; a larger body gets 413. A mapping may raise it for its own path (`hooks.mappings[].maxBodyBytes`).",
    ),
  ),
  maxTextChars: v.pipe(
    // About 250,000 tokens: more than most models take in a whole context, and beyond any text a sender means for
    // one; a 30 MB body cut here costs the wrapper, the journal and the session what 1 MB does.
    v.optional(PositiveInt, 1_000_000),
    v.description(
      "The longest text, in UTF-16 characters, that a wake or an agent turn carries to the model: a direct body's `text` or `message`, a mapping's rendered template, a transform's. A longer one is cut there and ends with a line saying how many characters were cut. The default body limit never reaches it.",
    ),
  ),
  bodyTimeoutMs: v.pipe(
    v.optional(PositiveInt, 30_000),
    v.description("Milliseconds a body has to arrive in full; a body not received in time gets 408."),
  ),
  presets: v.pipe(
    v.optional(v.array(v.picklist(["mailbox"], 'unknown preset (the one preset is "mailbox")')), []),
    v.description(
      "Built-in mappings, tried after yours; `mailbox` is the one preset ([The mailbox preset](mappings.md#the-mailbox-preset)).",
    ),
  ),
  mappings: v.pipe(
    v.optional(v.array(MappingSchema), []),
    v.description(
      "A mapping turns a request to `<hooks.path>/<name>` into a wake or agent action ([Writing mappings](mappings.md#writing-mappings)). Mappings are tried in order (yours, then presets); the first whose `match` holds owns the request.",
    ),
  ),
  transformsDir: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1)), "hooks/transforms"),
    v.description(
      "Where transform modules live, relative to the config file's directory; a mapping's module must resolve inside it, symlinks included.",
    ),
  ),
  allowRequestSessionKey: v.pipe(
    v.optional(v.boolean(), true),
    v.description(
      "Whether callers (bodies, templates that read the payload, transforms) may choose session keys; a fixed key written in a mapping is the operator's and stays allowed.",
    ),
  ),
  allowedSessionKeyPrefixes: v.pipe(
    v.optional(v.array(v.pipe(v.string(), v.minLength(1))), ["hook:"]),
    v.description("Case-insensitive prefixes every chosen or default session key needs; `[]` allows any."),
  ),
  defaultSessionKey: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1))),
    v.description(
      "The session key of agent runs that name none; it must pass the prefixes and must not be the main session's. Unset: `hook:<uuid>`, a new one per run.",
    ),
  ),
  allowRequestAgentId: v.pipe(
    v.optional(v.boolean(), false),
    v.description(
      "Whether callers (`/wake` and `/agent` bodies, transforms) may name an `agentId`; one that does while this is `false` gets 400 `AGENT_ID_NOT_ALLOWED`. An `agentId` written in a mapping is the operator's and stays allowed.",
    ),
  ),
  allowedAgentIds: v.pipe(
    v.optional(v.array(v.pipe(v.string(), v.minLength(1, "must not be empty")))),
    v.description(
      'The agents hooks may reach, the default agent included (a request that names none is checked as the default). Unset or containing `"*"`: every agent; `[]`: none. A request for another gets 400 `AGENT_ID_NOT_ALLOWED`; a mapping naming one is a config error.',
    ),
  ),
  authFailures: v.pipe(
    v.optional(AuthFailuresSchema, {}),
    v.description(
      "Failed authentications (a wrong token, a failed signature) counted per client address, the address found as `trustedProxies` says.",
    ),
  ),
  trustedProxies: v.pipe(
    v.optional(v.array(v.string()), []),
    v.description(
      "Peers whose `X-Forwarded-For` is believed when finding the client address (the address failed authentications are counted against). Each entry is an address (`10.0.0.5`, `::1`), a CIDR range (`10.0.0.0/8`) or one of `loopback`, `linklocal`, `uniquelocal`; anything else is a config error. The header is read from the nearest hop outwards and stops at the first address that is not trusted.",
    ),
  ),
  addressRanges: v.pipe(
    v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
    v.description(
      'A JSON file of named address ranges for `allowFrom`, relative to the config file\'s directory: `{ "<name>": { "ranges": ["192.0.2.0/24", …], "source": "…" } }` (or `"<name>": [ … ]`). Its names add to the bundled ones (`github`: GitHub\'s webhook source ranges) and replace a bundled one of the same name. Read at each start and reload ([Allowing only some source addresses](http.md#allowing-only-some-source-addresses)). Unset: the bundled names only.',
    ),
  ),
  limits: v.pipe(
    v.optional(HooksLimitsSchema, {}),
    v.description(
      "Limits per hook: a rate ([Rate limits](http.md#rate-limits)), agent turns at a time ([Turns at a time](http.md#turns-at-a-time)) and the source addresses it accepts ([Allowing only some source addresses](http.md#allowing-only-some-source-addresses)). `default` applies to every hook without its own: each mapping without its own fields, `/wake` and `/agent` without `wake`'s or `agent`'s. No rate is limited and no source refused unless set here or on a mapping; agent turns run at most 4 at a time per hook.",
    ),
  ),
  dedupe: v.pipe(
    v.optional(DedupeSchema, {}),
    v.description(
      "Duplicate deliveries: how long an accepted delivery id is remembered, and how many at most ([Duplicates](http.md#duplicates-and-idempotency-key)).",
    ),
  ),
  journal: v.pipe(
    v.optional(JournalSchema, {}),
    v.description(
      "The request journal: where accepted requests are recorded before their answer, and for how long ([The request journal](journal.md#the-request-journal)).",
    ),
  ),
  store: v.pipe(
    v.optional(StoreSchema, { kind: "memory" }),
    v.description(
      "Where failed-authentication counts and delivery ids (with their first answers) live: this process, or a Redis shared by several gateways ([Running several gateways](several-gateways.md#running-several-gateways), [The shared store](store.md#the-shared-store-redis)).",
    ),
  ),
  transforms: v.pipe(
    v.optional(TransformsSchema, {}),
    v.description(
      "The worker threads transforms run in ([Where transforms run](transforms.md#where-transforms-run-worker-threads-or-inline)).",
    ),
  ),
  exposeReplies: v.pipe(
    v.optional(v.boolean(), false),
    v.description(
      'Whether a caller waiting for its turn (`waitForCompletion`, `response: "completion"`) gets the reply\'s text (`replyText`), not only its kind.',
    ),
  ),
  admission: v.pipe(
    v.optional(AdmissionSchema, {}),
    v.description(
      "What one client address (found as for `authFailures`), and all together, may hold before anything vouches for it: bodies on signed paths, read before their signature can be checked, and callers waiting for their agent turn.",
    ),
  ),
  mailbox: v.pipe(
    v.optional(MailboxConfigSchema),
    v.description(
      "The mailbox `hooks mailbox run` watches, and the `mailbox` preset's settings; written by `hooks mailbox setup` ([Mail to the assistant](mailbox.md#mail-to-the-assistant)).",
    ),
  ),
});

export const ModelsSchema = v.union([
  v.array(v.string()),
  v.record(v.string(), v.looseObject({ alias: v.optional(v.string()) })),
]);

/** The slice of the gateway config the plugin reads; everything else belongs to the gateway. */
export const PluginGatewayConfigSchema = v.looseObject({
  hooks: v.pipe(
    v.optional(HooksConfigSchema),
    v.description("The webhook intake: its routes, mappings, limits and the state it keeps."),
  ),
  agents: v.pipe(
    v.optional(
      v.looseObject({
        entries: v.pipe(
          v.optional(v.record(v.string(), v.looseObject({}))),
          v.description(
            "The agents, by id, as OpenClaw's `agents.entries` (only the ids are read): what `agentId` may name. Unset: one agent, `main`.",
          ),
        ),
        defaults: v.pipe(
          v.optional(
            v.looseObject({
              models: v.pipe(
                v.optional(ModelsSchema),
                v.description(
                  'When non-empty, a `model` must be one of these refs or an alias of one (the alias resolves to its ref): a list of refs, or `{ "<ref>": { alias } }`.',
                ),
              ),
              systemAgent: v.optional(
                v.looseObject({
                  agentId: v.pipe(
                    v.optional(v.string()),
                    v.description(
                      "The default agent, which wakes and runs that name no `agentId` go to, unless `agents.defaults.heartbeat.agentId` names one (the agent whose heartbeat reads wakes). Unset: `main` when it is an entry, else the first entry.",
                    ),
                  ),
                }),
              ),
            }),
          ),
          v.description("What every agent shares: the model allow-list and the default agent."),
        ),
      }),
    ),
    v.description(
      "The agents hooks can reach, and the models they may ask for (OpenClaw's `agents`, in the same shape).",
    ),
  ),
  gateway: v.optional(
    v.looseObject({
      auth: v.optional(
        v.looseObject({
          token: v.pipe(
            v.optional(secretField(v.string())),
            v.description("The gateway's own token; read only to keep `hooks.token` distinct from it."),
          ),
        }),
      ),
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
