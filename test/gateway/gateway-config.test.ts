/** @module The gateway's own config sections: unknown top-level keys with "did you mean", server limits, runner.env. */
import { describe, expect, it } from "vitest";
import { formatIssue } from "../../src/config/issues.js";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_RETAIN_DAYS,
  parseGatewaySections,
} from "../../src/gateway/gateway-config.js";

const problems = (raw: unknown) => parseGatewaySections(raw, {}).issues.map(formatIssue);

describe("parseGatewaySections", () => {
  it.each([
    ["hook", 'hook: unknown key (did you mean "hooks"?)'],
    ["sever", 'sever: unknown key (did you mean "server"?)'],
    ["runners", 'runners: unknown key (did you mean "runner"?)'],
    ["chanels", 'chanels: unknown key (did you mean "channels"?)'],
    ["plugins", "plugins: unknown key"],
  ])("rejects the unknown top-level key %s", (key, message) => {
    expect(problems({ [key]: {} })).toEqual([message]);
  });

  it("lists unknown top-level keys in the same round as the sections' own problems", () => {
    expect(
      problems({
        hook: { enabled: true },
        sever: { port: 1 },
        heartbeat: { everySeconds: -1 },
        server: { prt: 1 },
        channels: ["fax"],
      }),
    ).toEqual([
      'hook: unknown key (did you mean "hooks"?)',
      'sever: unknown key (did you mean "server"?)',
      'server.prt: unknown key (did you mean "port"?)',
      expect.stringMatching(/^heartbeat\.everySeconds: /),
      expect.stringMatching(/^channels\[0\]: /),
    ]);
  });

  it("accepts every key the gateway config knows, the plugin's slice included, and leaves that slice to the plugin", () => {
    const { issues, sections } = parseGatewaySections(
      {
        hooks: { enabled: "not checked here" },
        agents: {},
        gateway: { auth: { token: "t" } },
        server: { port: 0 },
        session: { mainKey: "main" },
        heartbeat: { everySeconds: 0 },
        runner: { kind: "echo" },
        channels: ["telegram"],
        state: { retainDays: 7 },
        log: { file: "gateway.log" },
      },
      {},
    );
    expect(issues).toEqual([]);
    expect(sections.channels).toEqual(["telegram"]);
    expect(sections).not.toHaveProperty("hooks");
  });

  it("defaults the header timeout and the connection cap, and bounds them", () => {
    expect(parseGatewaySections({}, {}).sections.server).toMatchObject({
      headersTimeoutMs: DEFAULT_HEADERS_TIMEOUT_MS,
      maxConnections: DEFAULT_MAX_CONNECTIONS,
    });
    expect(
      parseGatewaySections({ server: { headersTimeoutMs: 300, maxConnections: 8 } }, {}).sections.server,
    ).toMatchObject({ headersTimeoutMs: 300, maxConnections: 8 });
    expect(problems({ server: { headersTimeoutMs: 0, maxConnections: 1.5 } })).toEqual([
      expect.stringMatching(/^server\.headersTimeoutMs: /),
      "server.maxConnections: must be an integer",
    ]);
    expect(problems({ server: { headersTimeoutMs: 120_000 } })).toEqual([
      "server.headersTimeoutMs: must be at most 60000",
    ]);
  });

  it("takes runner.env as a list of variable names, never the turn's own HOOKS_* names", () => {
    const command = { kind: "command", command: "agent" };
    expect(parseGatewaySections({ runner: command }, {}).sections.runner).toMatchObject({ env: [] });
    expect(
      parseGatewaySections({ runner: { ...command, env: ["OPENAI_API_KEY"] } }, {}).sections.runner,
    ).toMatchObject({ env: ["OPENAI_API_KEY"] });
    expect(problems({ runner: { ...command, env: ["HOOKS_TOKEN", "BAD-NAME"] } })).toEqual([
      "runner.env[0]: names starting with HOOKS_ are set by the runner for each turn",
      "runner.env[1]: must be an environment variable name (letters, digits, _)",
    ]);
  });

  it("keeps state for retainDays (default 30, any positive number) and logs to a file only when asked", () => {
    const { sections } = parseGatewaySections({}, {});
    expect(sections.state).toEqual({ retainDays: DEFAULT_RETAIN_DAYS });
    expect(sections.log).toBeUndefined();
    expect(parseGatewaySections({ log: { file: "g.log" } }, {}).sections.log).toEqual({
      file: "g.log",
      maxSizeMb: 10,
      keep: 5,
    });
    expect(problems({ state: { retainDays: 0 } })).toEqual([expect.stringMatching(/^state\.retainDays: /)]);
    expect(problems({ state: { retainDays: -1 } })).toEqual([expect.stringMatching(/^state\.retainDays: /)]);
    expect(parseGatewaySections({ state: { retainDays: 0.5 } }, {}).sections.state.retainDays).toBe(0.5);
    expect(problems({ state: { retainDay: 3 } })).toEqual([
      'state.retainDay: unknown key (did you mean "retainDays"?)',
    ]);
    expect(problems({ log: { file: "", maxSizeMb: 0, keeps: 2 } })).toEqual([
      "log.file: must not be empty",
      expect.stringMatching(/^log\.maxSizeMb: /),
      'log.keeps: unknown key (did you mean "keep"?)',
    ]);
  });
});
