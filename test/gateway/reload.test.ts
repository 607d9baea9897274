/** @module Config reload of the gateway, in-process: real file edits, real HTTP on loopback, and the same reload function SIGHUP calls. */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../../src/gateway/load-gateway-config.js";
import type { GatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import type { LogFields } from "../../src/host/contract.js";
import { cleanupCli, makeTempDir, startServe } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, readRecord, readState, serveArgs, writeConfig } from "./support.js";

const NEW_TOKEN = "reloaded-token-abcdefghijklmnopqrstuvwxyz";
const NEW_AUTH = { authorization: `Bearer ${NEW_TOKEN}` };

interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  msg: string;
  fields: LogFields | undefined;
}

/** Keeps every line, and lets a test await the next line that matches (one already logged does not count). */
function recordingLogger() {
  const lines: LogLine[] = [];
  const waiters: Array<{ where: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  const add = (level: LogLine["level"]) => (msg: string, fields?: LogFields) => {
    const line = { level, msg, fields };
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (!waiter.where(line)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  };
  const logger: GatewayLogger = {
    debug: add("debug"),
    info: add("info"),
    warn: add("warn"),
    error: add("error"),
    request() {},
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return {
    logger,
    lines,
    next: (where: (line: LogLine) => boolean) =>
      new Promise<LogLine>((resolve) => waiters.push({ where, resolve })),
  };
}

const reloaded = (line: LogLine) => line.msg.startsWith("config reloaded");
const notReloaded = (line: LogLine) => line.msg.startsWith("config not reloaded");
const reloadEnded = (line: LogLine) => reloaded(line) || notReloaded(line);

const wakeMapping = (id: string) => ({
  id,
  match: { path: id },
  action: "wake",
  textTemplate: `${id} {{n}}`,
});

let handle: GatewayHandle | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await cleanupCli();
});

/** `startGateway` on a config file in a temp dir, read the way `hooks serve` reads it. */
async function startOnFile(
  config: Record<string, unknown>,
  options: { watch?: boolean; debounceMs?: number } = {},
  dir = makeTempDir(),
) {
  const file = writeConfig(dir, config);
  const log = recordingLogger();
  const loaded = loadGatewayConfig({ config: file });
  const record = path.join(dir, "events.jsonl");
  const state = path.join(dir, "state");
  handle = await startGateway({
    config: loaded.raw,
    configDir: loaded.configDir,
    port: 0,
    stateDir: state,
    recordFile: record,
    logger: log.logger,
    source: { file, load: loaded.readAgain, ...options },
  });
  return { dir, file, log, handle, record, state };
}

describe("hooks serve reloads its config file", () => {
  it("a mapping added to the file answers without a restart, and one removed no longer does", async () => {
    const dir = makeTempDir();
    const config = writeConfig(dir, baseConfig({}, { mappings: [wakeMapping("alpha")] }));
    const { args } = serveArgs(dir, config);
    const gateway = await startServe(args);
    expect((await postJson(`${gateway.url}/hooks/beta`, { n: 1 })).status).toBe(404);

    writeConfig(dir, baseConfig({}, { mappings: [wakeMapping("beta")] }));
    const line = await gateway.waitForLog((r) => String(r.msg).startsWith("config reloaded"));
    expect(line).toMatchObject({ level: "info", mappings: 1, file: config });
    expect(line.msg).toContain("changed: hooks.mappings");

    const beta = await postJson(`${gateway.url}/hooks/beta`, { n: 2 });
    expect(beta).toMatchObject({ status: 200, body: { ok: true, mappingId: "beta" } });
    expect((await postJson(`${gateway.url}/hooks/alpha`, { n: 3 })).status).toBe(404);
  });

  it("a new token in the file: the old token gets 401, the new one 200", async () => {
    const { file, log, handle } = await startOnFile(baseConfig());
    expect((await postJson(`${handle.url}/hooks/wake`, { text: "before" }, AUTH)).status).toBe(200);

    const applied = log.next(reloadEnded);
    writeConfig(path.dirname(file), baseConfig({}, { token: NEW_TOKEN }));
    expect(await applied).toMatchObject({ level: "info" });

    expect((await postJson(`${handle.url}/hooks/wake`, { text: "old" }, AUTH)).status).toBe(401);
    expect((await postJson(`${handle.url}/hooks/wake`, { text: "new" }, NEW_AUTH)).status).toBe(200);
    // The log says what changed by name, never the value.
    expect(JSON.stringify(log.lines)).not.toContain(NEW_TOKEN);
  });

  it("a token too short to be safe is refused on reload as at a start: the running token keeps serving, the value is never printed", async () => {
    const SHORT = "abcde";
    // What a start does with it.
    const refusedStart = startOnFile(baseConfig({}, { token: SHORT }), { watch: false });
    await expect(refusedStart).rejects.toThrow(
      /hooks\.token: is 5 characters; a hook token needs at least 16/,
    );
    await expect(refusedStart).rejects.not.toThrow(SHORT);

    // The same config reached by a reload of a gateway that started with a strong token.
    const { file, log, handle: running } = await startOnFile(baseConfig(), { watch: false });
    writeConfig(path.dirname(file), baseConfig({}, { token: SHORT }));
    expect(await running.reload("test")).toMatchObject({ applied: false });
    const refusal = log.lines.filter(reloadEnded).at(-1);
    expect(refusal?.level).toBe("error");
    expect(refusal?.msg).toContain("hooks.token: is 5 characters");
    expect(
      (await postJson(`${running.url}/hooks/wake`, { text: "r" }, { authorization: `Bearer ${SHORT}` }))
        .status,
    ).toBe(401);
    expect((await postJson(`${running.url}/hooks/wake`, { text: "r" }, AUTH)).status).toBe(200);
    expect(JSON.stringify(log.lines)).not.toContain(`"${SHORT}"`);
  });

  it("a config with problems is not applied: the running one keeps serving, one error line lists them without their values, and the next good save applies", async () => {
    const { file, log, handle } = await startOnFile(baseConfig({}, { mappings: [wakeMapping("alpha")] }));
    const dir = path.dirname(file);

    const refused = log.next(reloadEnded);
    // Two problems at once, one of them next to a new token that must not be printed.
    writeConfig(dir, {
      hooks: {
        enabled: true,
        token: NEW_TOKEN,
        mappings: [{ ...wakeMapping("alpha"), action: "shout" }],
      },
      heartbeat: { everySeconds: -1 },
    });
    const line = await refused;
    expect(line.level).toBe("error");
    expect(line.msg).toMatch(/^config not reloaded \(file changed\): 2 problem\(s\), still serving/);
    expect(line.msg).toContain("hooks.mappings[0].action");
    expect(line.msg).toContain("heartbeat.everySeconds");
    expect(line.msg).not.toContain(NEW_TOKEN);
    expect(log.lines.filter(reloadEnded)).toHaveLength(1);

    const alpha = await postJson(`${handle.url}/hooks/alpha`, { n: 1 }, AUTH);
    expect(alpha).toMatchObject({ status: 200, body: { mappingId: "alpha" } });
    expect((await postJson(`${handle.url}/hooks/wake`, { text: "x" }, NEW_AUTH)).status).toBe(401);

    // Still watching: the fixed file is applied.
    const applied = log.next(reloadEnded);
    writeConfig(dir, baseConfig({}, { token: NEW_TOKEN, mappings: [wakeMapping("alpha")] }));
    expect(await applied).toMatchObject({ level: "info" });
    expect((await postJson(`${handle.url}/hooks/alpha`, { n: 2 }, NEW_AUTH)).status).toBe(200);
  });

  it("a file written in pieces is read once it is whole: one reload, of the finished file", async () => {
    // A wide margin over the pause below, so that a busy machine cannot stretch the pause past it.
    const { file, log, handle } = await startOnFile(baseConfig(), { debounceMs: 1_000 });
    const ended = log.next(reloadEnded);
    const text = JSON.stringify(baseConfig({}, { token: NEW_TOKEN }), null, 2);
    // As a slow editor or a copy over the network writes: half now, the rest a moment later (within the debounce).
    writeFileSync(file, text.slice(0, text.length / 2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    appendFileSync(file, text.slice(text.length / 2));
    expect(await ended).toMatchObject({ level: "info" });
    expect((await postJson(`${handle.url}/hooks/wake`, { text: "x" }, NEW_AUTH)).status).toBe(200);
  });

  it("a save that renames a new file over the old one is seen", async () => {
    const { file, log, handle } = await startOnFile(baseConfig());
    const ended = log.next(reloadEnded);
    writeFileSync(`${file}.tmp`, JSON.stringify(baseConfig({}, { token: NEW_TOKEN })));
    renameSync(`${file}.tmp`, file);
    expect(await ended).toMatchObject({ level: "info" });
    expect((await postJson(`${handle.url}/hooks/wake`, { text: "x" }, NEW_AUTH)).status).toBe(200);
  });

  it("a mapping whose transform fails to load stops the reload; the running mappings keep serving", async () => {
    const { file, log, handle } = await startOnFile(baseConfig({}, { mappings: [wakeMapping("alpha")] }));
    const dir = path.dirname(file);
    mkdirSync(path.join(dir, "hooks/transforms"), { recursive: true });
    writeFileSync(path.join(dir, "hooks/transforms/broken.mjs"), "export default (;");

    const refused = log.next(reloadEnded);
    writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            wakeMapping("beta"),
            { id: "broken", match: { path: "broken" }, action: "wake", transform: { module: "broken.mjs" } },
          ],
        },
      ),
    );
    const line = await refused;
    expect(line.level).toBe("error");
    expect(line.msg).toContain("hooks.mappings[1].transform.module: failed to load");
    expect((await postJson(`${handle.url}/hooks/alpha`, { n: 1 }, AUTH)).status).toBe(200);
    expect((await postJson(`${handle.url}/hooks/beta`, { n: 1 }, AUTH)).status).toBe(404);
  });
});

describe("the reload SIGHUP calls", () => {
  it("applies what changes live, and names in one warning the fields that need a restart, which keep their running values", async () => {
    const { file, log, handle } = await startOnFile(baseConfig({}, { mappings: [wakeMapping("alpha")] }), {
      watch: false,
    });
    const port = handle.port;
    writeConfig(
      path.dirname(file),
      baseConfig(
        {
          server: { port: port + 1 },
          heartbeat: { everySeconds: 5 },
          agents: { entries: { main: {}, ops: {} } },
        },
        {
          path: "/elsewhere",
          store: { kind: "redis", url: "redis://127.0.0.1:1" },
          journal: { fsync: "always" },
          mappings: [wakeMapping("alpha"), wakeMapping("beta")],
        },
      ),
    );
    const outcome = await handle.reload("SIGHUP");
    expect(outcome).toEqual({
      applied: true,
      changed: ["hooks.mappings"],
      restartNeeded: [
        "server.port",
        "heartbeat.everySeconds",
        "hooks.path",
        "hooks.store",
        "hooks.journal.fsync",
        "agents",
      ],
      mappings: 2,
    });
    const warning = log.lines.find((line) => line.level === "warn");
    expect(warning?.msg).toBe(
      "config changes that need a restart were not applied, their running values stay: server.port, heartbeat.everySeconds, hooks.path, hooks.store, hooks.journal.fsync, agents",
    );
    expect(log.lines.filter(reloaded).map((line) => line.msg)).toEqual([
      "config reloaded (SIGHUP): 2 mapping(s) (was 1); changed: hooks.mappings",
    ]);

    // The new mapping answers, on the running path and port.
    expect((await postJson(`${handle.url}/hooks/beta`, { n: 1 }, AUTH)).status).toBe(200);
    expect((await postJson(`${handle.url}/elsewhere/beta`, { n: 1 }, AUTH)).status).toBe(404);
    expect(handle.hooks?.mappings.map((mapping) => mapping.id)).toEqual(["alpha", "beta"]);
  });

  it("with nothing changed, says so", async () => {
    const { log, handle } = await startOnFile(baseConfig(), { watch: false });
    expect(await handle.reload("SIGHUP")).toEqual({
      applied: true,
      changed: [],
      restartNeeded: [],
      mappings: 0,
    });
    expect(log.lines.filter(reloadEnded).map((line) => line.msg)).toEqual([
      "config reloaded (SIGHUP): 0 mapping(s); changed: nothing",
    ]);
  });
});

/** The node:http server that answered a request to `url`, as Node's own diagnostics channel names it. */
async function serverAt(url: string): Promise<Server> {
  let seen: Server | undefined;
  const listener = (message: unknown) => {
    seen = (message as { server: Server }).server;
  };
  subscribe("http.server.request.start", listener);
  try {
    await (await fetch(url)).arrayBuffer();
  } finally {
    unsubscribe("http.server.request.start", listener);
  }
  if (!seen) throw new Error(`no request to ${url} was seen`);
  return seen;
}

describe("a reload of the settings the gateway reads from the plugin", () => {
  it("hooks.bodyTimeoutMs moves the server's whole-request timeout along, which stays above the body's deadline", async () => {
    const { file, handle } = await startOnFile(baseConfig({ server: { headersTimeoutMs: 5_000 } }), {
      watch: false,
    });
    const server = await serverAt(`${handle.url}/`);
    // The default body deadline (30 s) plus the headers' is under the 60 s floor.
    expect(server.requestTimeout).toBe(60_000);

    writeConfig(
      path.dirname(file),
      baseConfig({ server: { headersTimeoutMs: 5_000 } }, { bodyTimeoutMs: 90_000 }),
    );
    expect(await handle.reload("SIGHUP")).toMatchObject({ applied: true, changed: ["hooks.bodyTimeoutMs"] });
    expect(server.requestTimeout).toBe(95_000);

    writeConfig(
      path.dirname(file),
      baseConfig({ server: { headersTimeoutMs: 5_000 } }, { bodyTimeoutMs: 1_000 }),
    );
    expect(await handle.reload("SIGHUP")).toMatchObject({ applied: true });
    expect(server.requestTimeout).toBe(60_000);
  });

  it("hooks.authFailures applies to wrong metrics tokens from the next one, the count kept so far included", async () => {
    const metricsToken = "reload-metrics-token-0123456789";
    const config = (limit: number) =>
      baseConfig({ server: { metricsToken } }, { authFailures: { limit, windowSeconds: 600 } });
    const { file, handle } = await startOnFile(config(5), { watch: false });
    const scrape = async (token: string) => {
      const response = await fetch(`${handle.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await response.arrayBuffer();
      return response.status;
    };
    const guesses = async (count: number) => {
      const statuses = [];
      for (let i = 0; i < count; i++) statuses.push(await scrape(`guess-${i}`));
      return statuses;
    };
    expect(await guesses(2)).toEqual([401, 401]);

    writeConfig(path.dirname(file), config(3));
    expect(await handle.reload("SIGHUP")).toMatchObject({ applied: true, changed: ["hooks.authFailures"] });
    // Two failures counted before the reload, a third now: past the new limit, where the old one allowed two more.
    expect(await guesses(3)).toEqual([401, 429, 429]);
    expect(await scrape(metricsToken)).toBe(200);
  });
});

/** A server whose answers the test releases: a transform that fetches from it waits, inside its request, until then. */
async function startGate() {
  const held: ServerResponse[] = [];
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server = createServer((_req, res) => {
    held.push(res);
    arrived();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    arrived: first,
    release: () => {
      for (const res of held.splice(0)) res.end("released");
    },
  };
}

describe("requests across a reload", () => {
  it("a request under way finishes on the config it started with; none sent during reloads is refused; each is recorded once", async () => {
    const gate = await startGate();
    const held = {
      id: "held",
      match: { path: "held" },
      action: "wake",
      textTemplate: "held {{n}}",
      transform: { module: "held.mjs", isolate: "inline" },
    };
    const dir = makeTempDir();
    mkdirSync(path.join(dir, "hooks/transforms"), { recursive: true });
    writeFileSync(
      path.join(dir, "hooks/transforms/held.mjs"),
      `export default async () => { await (await fetch(${JSON.stringify(gate.url)})).text(); return undefined; };`,
    );
    const {
      record,
      state,
      handle: gateway,
    } = await startOnFile(baseConfig({}, { mappings: [held, wakeMapping("alpha")] }), { watch: false }, dir);
    const url = gateway.url;

    // Authenticated with the old token and owned by `held`: past its auth, waiting in its transform.
    const underWay = postJson(`${url}/hooks/held`, { n: 1 }, AUTH);
    await gate.arrived;

    // The new config drops `held` and changes the token: the request under way is not touched by either.
    writeConfig(dir, baseConfig({}, { token: NEW_TOKEN, mappings: [wakeMapping("alpha")] }));
    expect(await gateway.reload("SIGHUP")).toMatchObject({ applied: true });
    gate.release();
    const answer = await underWay;
    expect(answer).toMatchObject({ status: 200, body: { ok: true, mappingId: "held" } });
    expect((await postJson(`${url}/hooks/held`, { n: 2 }, NEW_AUTH)).status).toBe(404);

    // A stream of requests while the config swaps back and forth (same token both ways): every one is accepted.
    const count = 120;
    const sent: Array<ReturnType<typeof postJson>> = [];
    const swaps: Array<Promise<unknown>> = [];
    for (let i = 0; i < count; i++) {
      sent.push(postJson(`${url}/hooks/alpha`, { n: i }, NEW_AUTH));
      if (i % 20 === 10) {
        const mappings = i % 40 === 10 ? [wakeMapping("alpha"), wakeMapping("beta")] : [wakeMapping("alpha")];
        writeConfig(dir, baseConfig({}, { token: NEW_TOKEN, mappings }));
        swaps.push(gateway.reload("SIGHUP"));
      }
    }
    const answers = await Promise.all(sent);
    const outcomes = await Promise.all(swaps);
    expect(outcomes.every((outcome) => (outcome as { applied: boolean }).applied)).toBe(true);
    expect(answers.map((a) => a.status)).toEqual(Array(count).fill(200));
    await gateway.close();
    handle = undefined;

    // One event per accepted request, none twice, and the state holds each of them once.
    const requestOf = (a: { headers: Headers }) => a.headers.get("x-request-id")!;
    const ids = [requestOf(answer), ...answers.map(requestOf)];
    expect(new Set(ids).size).toBe(count + 1);
    const recorded = readRecord(record)
      .filter((line) => line.event === "session:system-event")
      .map((line) => line.payload.source.requestId as string);
    expect(recorded.sort()).toEqual([...ids].sort());
    const stored = readState(state, (reader) => [...reader.queue(), ...reader.transcript()])
      .flatMap((entry) => (entry.kind === "system-event" ? [entry.source.requestId] : []))
      .sort();
    expect(stored).toEqual([...ids].sort());
  });
});
