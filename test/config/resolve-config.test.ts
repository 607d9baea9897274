import path from "node:path";
import { describe, expect, it } from "vitest";
import { normalizeHooksPath } from "../../src/config/hooks-path.js";
import { isConfigError } from "../../src/config/issues.js";
import { parseGatewayConfigText } from "../../src/config/load-file.js";
import { createHooksPlugin } from "../../src/index.js";
import { prepareHooks } from "../../src/prepare-hooks.js";
import { describeStatus } from "../../src/status.js";
import { startTestHost } from "../helpers/test-host.js";

const TOKEN = "config-test-token-0123456789abcdef";
const context = { configDir: "/etc/gateway" };

function problems(hooks: Record<string, unknown>, rest: Record<string, unknown> = {}): string[] {
  return prepareHooks({ ...rest, hooks: { enabled: true, token: TOKEN, ...hooks } }, context).issues.map(
    (issue) => `${issue.path}: ${issue.message}`,
  );
}

describe("config rules", () => {
  it("applies the defaults", () => {
    const { prepared, issues } = prepareHooks({ hooks: { enabled: true, token: TOKEN } }, context);
    expect(issues).toEqual([]);
    expect(prepared!.config).toMatchObject({
      path: "/hooks",
      maxBodyBytes: 262144,
      bodyTimeoutMs: 30000,
      presets: [],
      mappings: [],
      transformsDir: path.resolve("/etc/gateway/hooks/transforms"),
      allowRequestSessionKey: true,
      allowedSessionKeyPrefixes: ["hook:"],
      authFailures: { limit: 20, windowSeconds: 60 },
      trustedProxies: [],
      mainSessionKey: "main",
    });
  });

  it.each([
    [{ token: undefined }, "hooks.token: is required when hooks.enabled is true"],
    [{ token: "   " }, "hooks.token: is required when hooks.enabled is true"],
    [{ path: "/" }, 'hooks.path: must not be "/" alone'],
    [{ path: "/hooks?x" }, "hooks.path: must not contain '?', '#' or spaces"],
    [{ path: "/my hooks" }, "hooks.path: must not contain '?', '#' or spaces"],
    [{ path: "/a#b" }, "hooks.path: must not contain"],
    [{ maxBodyBytes: 33554433 }, "hooks.maxBodyBytes: must be at most 33554432"],
    [{ maxBodyBytes: 0 }, "hooks.maxBodyBytes: must be at least 1"],
    [{ bodyTimeoutMs: 1.5 }, "hooks.bodyTimeoutMs: must be an integer"],
    [{ presets: ["mailbox", "github"] }, 'hooks.presets[1]: unknown preset (the one preset is "mailbox")'],
    [{ tokn: "x" }, 'hooks.tokn: unknown key (did you mean "token"?)'],
    [{ mapings: [] }, 'hooks.mapings: unknown key (did you mean "mappings"?)'],
    [{ zzz: 1 }, "hooks.zzz: unknown key"],
    [
      { authFailures: { limit: 5, windw: 1 } },
      'hooks.authFailures.windw: unknown key (did you mean "windowSeconds"?)',
    ],
    [
      { defaultSessionKey: "agent:x" },
      "hooks.defaultSessionKey: must start with one of hooks.allowedSessionKeyPrefixes",
    ],
    [
      { defaultSessionKey: "main", allowedSessionKeyPrefixes: [] },
      "hooks.defaultSessionKey: must not be the main session's key",
    ],
    [
      { mappings: [{ match: { path: "x" }, messageTemplate: "{{ payload.a" }] },
      'hooks.mappings[0].messageTemplate: invalid template: unclosed "{{"',
    ],
    [
      { mappings: [{ match: { path: "x" }, actoin: "wake" }] },
      'hooks.mappings[0].actoin: unknown key (did you mean "action"?)',
    ],
    [
      { mappings: [{}, { transform: { module: "../escape.ts" } }] },
      'hooks.mappings[1].transform.module: must not contain ".." segments',
    ],
    [{ mappings: [{ match: { path: "wake" } }] }, 'hooks.mappings[0].match.path: "wake" is reserved'],
    [
      { mappings: [{ match: { path: "café bar" } }] },
      "hooks.mappings[0].match.path: has characters a sender must percent-encode",
    ],
    [
      { mappings: [{ id: "a" }, { id: "a" }] },
      'hooks.mappings[1].id: "a" is already used by hooks.mappings[0]',
    ],
    [
      { mappings: [{ maxBodyBytes: 40_000_000 }] },
      "hooks.mappings[0].maxBodyBytes: must be at most 33554432",
    ],
    [
      { mappings: [{ timeoutSeconds: 0 }] },
      "hooks.mappings[0].timeoutSeconds: timeoutSeconds must be a positive number",
    ],
    [{ mappings: [{ channel: "sms" }] }, 'hooks.mappings[0].channel: channel "sms" is not offered here'],
    [
      { mappings: [{ channel: "whatsapp", to: "12345" }] },
      "hooks.mappings[0].to: to must be an E.164 phone number",
    ],
    [{ mappings: [{ thinking: "ultra" }] }, "hooks.mappings[0].thinking: must be off, minimal"],
    [{ mappings: [{ model: "bare-name" }] }, "hooks.mappings[0].model: must be a provider/model reference"],
    [
      { mappings: [{ sessionKey: "agent:fixed" }] },
      "hooks.mappings[0].sessionKey: The session key must start with one of",
    ],
    [
      { mappings: [{ sessionKey: "main" }], allowedSessionKeyPrefixes: [] },
      "hooks.mappings[0].sessionKey: The main session cannot be targeted",
    ],
    [
      { limits: { wake: { rateLimit: { requests: 10, perSeconds: 86_401 } } } },
      "hooks.limits.wake.rateLimit.perSeconds: must be at most 86400 (a day)",
    ],
    [
      { limits: { default: { rateLimit: { requests: 0, perSeconds: 60 } } } },
      "hooks.limits.default.rateLimit.requests: must be at least 1",
    ],
    [
      { limits: { agent: { rateLimit: { requests: 1, perSeconds: 60, per: "address" } } } },
      'hooks.limits.agent.rateLimit.per: must be "client" or "hook"',
    ],
    [{ limits: { wak: {} } }, 'hooks.limits.wak: unknown key (did you mean "wake"?)'],
    [
      { limits: { default: { ratelimit: {} } } },
      'hooks.limits.default.ratelimit: unknown key (did you mean "rateLimit"?)',
    ],
    [
      { mappings: [{ rateLimit: { requests: 1, perSecond: 60 } }] },
      'hooks.mappings[0].rateLimit.perSecond: unknown key (did you mean "perSeconds"?)',
    ],
    [
      { allowedSessionKeyPrefixes: ["team:"] },
      'hooks.allowedSessionKeyPrefixes: agent runs that name no session key get "hook:<uuid>"',
    ],
  ])("%j → %s", (hooks, expected) => {
    const found = problems(hooks as Record<string, unknown>);
    expect(found.some((line) => line.startsWith(expected))).toBe(true);
  });

  it("refuses a hook token equal to gateway.auth.token", () => {
    expect(problems({}, { gateway: { auth: { token: TOKEN } } })).toEqual([
      "hooks.token: must differ from gateway.auth.token: the hook token is a dedicated secret",
    ]);
  });

  it("reports every problem at once", () => {
    const found = problems({ token: "", path: "/", presets: ["nope"], mappings: [{ textTemplate: "{{" }] });
    expect(found.length).toBeGreaterThanOrEqual(3);
    const paths = found.map((line) => line.split(":")[0]);
    expect(paths).toContain("hooks.presets[0]");
  });

  it("refuses a token shorter than 16 characters and warns about one shorter than 24, never printing it", () => {
    const short = prepareHooks({ hooks: { enabled: true, token: "short-token" } }, context);
    expect(short.issues).toEqual([
      {
        path: "hooks.token",
        message: 'is 11 characters; a hook token needs at least 16 (generate one with "hooks token")',
      },
    ]);
    const weak = prepareHooks({ hooks: { enabled: true, token: "a-weak-token-0123456" } }, context);
    expect(weak.issues).toEqual([]);
    expect(weak.warnings.join("\n")).toMatch(/shorter than 24 characters/);
    // A `${VAR}` nobody read, served as it stands, is a 14-character token like any other.
    const unread = prepareHooks({ hooks: { enabled: true, token: "${HOOKS_TOKEN}" } }, context);
    expect(unread.issues.map((issue) => issue.message)).toEqual([
      'is 14 characters; a hook token needs at least 16 (generate one with "hooks token")',
    ]);
    const said = [short.issues, short.warnings, weak.issues, weak.warnings];
    expect(JSON.stringify(said)).not.toContain("short-token");
    expect(JSON.stringify(said)).not.toContain("weak-token-0123456");
  });

  it("enforces the allow-list shape of agents.defaults.models", () => {
    const { issues } = prepareHooks(
      { hooks: { enabled: true, token: TOKEN }, agents: { defaults: { models: 42 } } },
      context,
    );
    expect(issues[0]!.path).toBe("agents.defaults.models");
  });

  it("resolves transformsDir relative to the config file's directory", () => {
    const { prepared } = prepareHooks(
      { hooks: { enabled: true, token: TOKEN, transformsDir: "t" } },
      context,
    );
    expect(prepared!.config.transformsDir).toBe(path.resolve("/etc/gateway/t"));
  });

  it.each([
    ["hooks", "/hooks"],
    ["/hooks/", "/hooks"],
    ["/a/b//", "/a/b"],
    ["  /x  ", "/x"],
  ])("normalises hooks.path %j → %j", (input, output) => {
    expect(normalizeHooksPath(input)).toEqual({ ok: true, path: output });
  });

  it("substitutes ${VAR} from the environment and names a missing one with its path", () => {
    const text = `{ hooks: { enabled: true, token: "\${HOOK_SECRET}", path: "/in", mappings: [{ name: "\${MISSING_ONE}" }] } }`;
    const ok = parseGatewayConfigText(text, "/etc/gateway/gateway.json5", {
      HOOK_SECRET: TOKEN,
      MISSING_ONE: "n",
    });
    expect(ok.issues).toEqual([]);
    expect((ok.config.hooks as { token: string }).token).toBe(TOKEN);
    const missing = parseGatewayConfigText(text, "/etc/gateway/gateway.json5", { HOOK_SECRET: TOKEN });
    expect(missing.issues).toEqual([
      {
        path: "hooks.mappings[0].name",
        message: "environment variable MISSING_ONE is not set",
        variable: "MISSING_ONE",
      },
    ]);
  });

  it("keeps $${ as a literal ${", () => {
    const loaded = parseGatewayConfigText(`{ a: "$\${NOT_A_VAR}" }`, "/x/g.json5", {});
    expect(loaded.config.a).toBe("${NOT_A_VAR}");
  });

  it("reports JSON5 syntax errors with the file name", () => {
    const loaded = parseGatewayConfigText("{ hooks: ", "/x/g.json5", {});
    expect(loaded.issues[0]!.message).toMatch(/\/x\/g\.json5 is not valid JSON5/);
  });

  it("register throws a ConfigError listing every problem, and the token never appears in it", () => {
    const plugin = createHooksPlugin();
    const error = (() => {
      try {
        return startTestHost(plugin, {
          hooks: { enabled: true, token: TOKEN, path: "/", zzz: 1 },
          gateway: { auth: { token: TOKEN } },
        });
      } catch (thrown) {
        return thrown;
      }
    })();
    return Promise.resolve(error).then(
      () => expect.unreachable(),
      (thrown: unknown) => {
        expect(isConfigError(thrown)).toBe(true);
        const message = (thrown as Error).message;
        expect(message).toContain("hooks.zzz");
        expect(message).not.toContain(TOKEN);
      },
    );
  });
});

describe("waiting for the completion, and transform isolation, in the config", () => {
  const agentMapping = { match: { path: "ci" }, messageTemplate: "m" };

  it("accepts response: completion and its other spelling respond: completion", () => {
    expect(problems({ mappings: [{ ...agentMapping, response: "completion" }] })).toEqual([]);
    expect(problems({ mappings: [{ ...agentMapping, respond: "completion" }] })).toEqual([]);
    const { prepared } = prepareHooks(
      { hooks: { enabled: true, token: TOKEN, mappings: [{ ...agentMapping, respond: "completion" }] } },
      context,
    );
    expect(prepared?.mappings[0]?.waitForCompletion).toBe(true);
  });

  it("refuses a fixed response together with respond: completion, and completion with forEach", () => {
    expect(
      problems({ mappings: [{ ...agentMapping, respond: "completion", response: { body: "ok" } }] }),
    ).toEqual([
      "hooks.mappings[0].respond: a mapping has one answer: a fixed response or the turn's completion, not both",
    ]);
    expect(problems({ mappings: [{ ...agentMapping, forEach: "items", response: "completion" }] })).toEqual([
      "hooks.mappings[0].response: cannot wait for the completion of a forEach fan-out; drop forEach or the completion answer",
    ]);
    expect(problems({ mappings: [{ ...agentMapping, action: "wake", respond: "completion" }] })).toEqual([
      'hooks.mappings[0].respond: a wake has no turn to wait for: use action "agent", or drop the completion answer',
    ]);
    expect(problems({ mappings: [{ ...agentMapping, response: "finished" }] })[0]).toMatch(
      /^hooks\.mappings\[0\]\.response: /,
    );
  });

  it("defaults transforms to the worker pool with a 128 MB heap, and checks the settings", () => {
    const { prepared } = prepareHooks(
      {
        hooks: {
          enabled: true,
          token: TOKEN,
          mappings: [{ ...agentMapping, transform: { module: "t.ts" } }],
        },
      },
      context,
    );
    expect(prepared?.config.transforms).toEqual({ maxMemoryMb: 128, env: [] });
    expect(prepared?.mappings[0]?.transform?.isolate).toBe("worker");
    expect(prepared?.config.exposeReplies).toBe(false);
    expect(problems({ transforms: { maxMemoryMb: 16 } })).toEqual([
      "hooks.transforms.maxMemoryMb: must be at least 32",
    ]);
    expect(problems({ transforms: { env: ["GOOD_NAME", "not a name"] } })).toEqual([
      "hooks.transforms.env[1]: must be an environment variable name (letters, digits, _)",
    ]);
    expect(
      problems({ mappings: [{ ...agentMapping, transform: { module: "t.ts", isolate: "thread" } }] }),
    ).toEqual(['hooks.mappings[0].transform.isolate: must be "worker" or "inline"']);
  });
});

describe("hooks.store", () => {
  it("defaults to memory; a Redis store takes a URL, a key prefix, a timeout and whether it may evict keys", () => {
    const { prepared } = prepareHooks({ hooks: { enabled: true, token: TOKEN } }, context);
    expect(prepared?.config.store).toEqual({ kind: "memory" });
    const redis = prepareHooks(
      { hooks: { enabled: true, token: TOKEN, store: { kind: "redis", url: "redis://10.0.0.5:6379/2" } } },
      context,
    );
    expect(redis.issues).toEqual([]);
    expect(redis.prepared?.config.store).toEqual({
      kind: "redis",
      url: "redis://10.0.0.5:6379/2",
      keyPrefix: "hooks:",
      timeoutMs: 1000,
      allowEviction: false,
    });
  });

  it.each([
    [{ kind: "memcached" }, 'hooks.store.kind: must be { kind: "memory" } or { kind: "redis", url }'],
    [{ kind: "redis" }, "hooks.store.url:"],
    [{ kind: "redis", url: "http://cache:6379" }, "hooks.store.url: must be a redis:// or rediss:// URL"],
    [
      { kind: "redis", url: "redis://cache", keyPrefx: "x:" },
      'hooks.store.keyPrefx: unknown key (did you mean "keyPrefix"?)',
    ],
    [{ kind: "redis", url: "redis://cache", timeoutMs: 0 }, "hooks.store.timeoutMs: must be at least 1"],
  ])("refuses %j", (store, message) => {
    const found = problems({ store });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });

  it("keeps the URL's password out of the status line", () => {
    const { prepared } = prepareHooks(
      {
        hooks: { enabled: true, token: TOKEN, store: { kind: "redis", url: "redis://:s3cret@cache:6380/1" } },
      },
      context,
    );
    const status = describeStatus(prepared!.config, []);
    expect(status.store).toBe("redis redis://cache:6380/1 (keys hooks:*)");
  });
});
