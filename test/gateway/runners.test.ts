/** @module The `command` and `openai` runners through the real CLI: a real child process, a real chat-completions server. */
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCommandRunner } from "../../src/gateway/runners/command.js";
import {
  cleanupCli,
  makeTempDir,
  pollFor,
  type Serve,
  startServe,
  startServeProcess,
} from "../helpers/cli.js";
import { procStatusKb } from "../helpers/proc-status.js";
import { AUTH, baseConfig, postJson, readRecord, serveArgs, writeConfig } from "./support.js";

const servers: Server[] = [];
afterEach(async () => {
  await cleanupCli();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** Runs one agent turn and returns its `session:agent-turn-finished` payload from the record. */
async function runTurn(
  gateway: Serve,
  record: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = AUTH,
) {
  const response = await postJson(`${gateway.url}/hooks/agent`, { deliver: false, ...body }, headers);
  expect(response.status).toBe(202);
  const runId: string = response.body.runId;
  await gateway.waitForLog((r) => r.msg === "agent turn finished" && r.runId === runId);
  return readRecord(record).find(
    (line) => line.event === "session:agent-turn-finished" && line.payload.runId === runId,
  )!.payload;
}

const AGENT_SCRIPT = `
import { writeFileSync } from "node:fs";
let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
if (input.includes("SLEEP")) {
  writeFileSync(process.env.PID_FILE, String(process.pid));
  setTimeout(() => {}, 60_000);
} else if (input.includes("FAIL")) {
  process.stderr.write("kaput\\n");
  process.exit(3);
} else {
  const raw = input.includes("<<<") ? input.split("\\n").slice(2, -1).join("\\n") : input;
  process.stdout.write("agent says: " + raw.toUpperCase() + " key=" + process.env.HOOKS_SESSION_KEY +
    " token-visible=" + (process.env.HOOKS_TOKEN !== undefined) +
    " secret-visible=" + (process.env.OTHER_SECRET !== undefined) + "\\n");
}
`;

describe("command runner", () => {
  it("pipes the message to a real program and reports its reply, its failure, and its timeout (killing it)", async () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "agent.mjs"), AGENT_SCRIPT);
    const pidFile = path.join(dir, "agent.pid");
    const config = writeConfig(
      dir,
      baseConfig(
        // The program sees PID_FILE because the config names it; nothing else of the gateway's environment.
        { runner: { kind: "command", command: process.execPath, args: ["agent.mjs"], env: ["PID_FILE"] } },
        { token: "${HOOKS_TOKEN}" },
      ),
    );
    const { args, record } = serveArgs(dir, config);
    const gateway = await startServe(args, {
      env: {
        HOOKS_TOKEN: "command-runner-token-0123456789abcdef",
        PID_FILE: pidFile,
        OTHER_SECRET: "not for the agent",
      },
    });
    const auth = { authorization: "Bearer command-runner-token-0123456789abcdef" };
    const turn = (body: Record<string, unknown>) => runTurn(gateway, record, body, auth);

    const ok = await turn({ message: "hello there", sessionKey: "hook:cmd" });
    expect(ok).toMatchObject({
      status: "ok",
      reply: "agent says: HELLO THERE key=hook:cmd token-visible=false secret-visible=false",
    });

    const failed = await turn({ message: "please FAIL" });
    expect(failed).toMatchObject({ status: "error" });
    expect(failed.error).toMatch(/exited with code 3: kaput/);

    const slow = await turn({ message: "SLEEP forever", timeoutSeconds: 1 });
    expect(slow).toMatchObject({ status: "timeout" });
    // The program wrote its pid before it started to sleep, so the file is there by the time the turn timed out.
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    await pollFor(() => (isAlive(pid) ? undefined : true), `agent process ${pid} to be killed`, 5_000);
  });
});

describe("command runner environment", () => {
  const turn = {
    source: { hook: "agent", requestId: "r1" },
    runId: "run-env",
    sessionKey: "hook:env",
    message: "hi",
    raw: "hi",
    untrusted: true,
    name: "Hook",
    timeoutSeconds: 5,
    wakeMode: "now" as const,
    deliver: false,
    channel: "last",
    model: "local/model",
  };
  /** Everything the gateway's process might hold: the variables behind its tokens, keys and passwords. */
  const gatewayEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/home/gateway",
    LANG: "C.UTF-8",
    HOOKS_TOKEN: "hook-token-secret",
    GATEWAY_AUTH_TOKEN: "gateway-token-secret",
    OPENAI_API_KEY: "sk-secret",
    MAILBOX_PASSWORD: "imap-secret",
    AGENT_SETTING: "for the agent",
  };

  async function childEnvOf(passed: string[]): Promise<Record<string, string>> {
    const runner = createCommandRunner(
      {
        kind: "command",
        command: process.execPath,
        args: ["-e", "process.stdout.write(JSON.stringify(process.env))"],
        env: passed,
      },
      os.tmpdir(),
      gatewayEnv,
    );
    const output = await runner.run({ turn, history: [], signal: new AbortController().signal });
    return JSON.parse(output.reply);
  }

  it("hands a real program only PATH, HOME, LANG, TZ (those set) and the turn's HOOKS_* variables", async () => {
    const env = await childEnvOf([]);
    expect(Object.keys(env).sort()).toEqual(
      [
        "HOME",
        "HOOKS_MODEL",
        "HOOKS_RUN_ID",
        "HOOKS_SESSION_FILE",
        "HOOKS_SESSION_KEY",
        "LANG",
        "PATH",
      ].sort(),
    );
    expect(env).toMatchObject({
      PATH: gatewayEnv.PATH,
      HOME: "/home/gateway",
      LANG: "C.UTF-8",
      HOOKS_RUN_ID: "run-env",
      HOOKS_SESSION_KEY: "hook:env",
      HOOKS_MODEL: "local/model",
    });
    expect(JSON.stringify(env)).not.toMatch(/secret/);
  });

  it("passes the variables runner.env names, and skips a named one that is not set", async () => {
    const env = await childEnvOf(["AGENT_SETTING", "OPENAI_API_KEY", "NOT_SET_ANYWHERE"]);
    expect(env).toMatchObject({ AGENT_SETTING: "for the agent", OPENAI_API_KEY: "sk-secret" });
    expect(env).not.toHaveProperty("NOT_SET_ANYWHERE");
    expect(env).not.toHaveProperty("HOOKS_TOKEN");
    expect(env).not.toHaveProperty("GATEWAY_AUTH_TOKEN");
    expect(env).not.toHaveProperty("MAILBOX_PASSWORD");
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface ChatRequest {
  url: string;
  authorization: string | undefined;
  body: { model: string; messages: Array<{ role: string; content: string }> };
  /** Resolves true when the client went away before an answer was sent. */
  closed: Promise<boolean>;
}

/** A chat-completions server: answers with a count of the messages it got, hangs on HANG, fails on ERROR. */
async function startChatServer(): Promise<{ url: string; requests: ChatRequest[] }> {
  const requests: ChatRequest[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const entry: ChatRequest = {
      url: req.url ?? "",
      authorization: req.headers.authorization,
      body: JSON.parse(text),
      closed: new Promise((resolve) => res.once("close", () => resolve(!res.writableFinished))),
    };
    requests.push(entry);
    const last = entry.body.messages.at(-1)?.content ?? "";
    if (last.includes("HANG")) return;
    res.setHeader("content-type", "application/json");
    if (last.includes("ERROR")) {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: { message: "model not loaded" } }));
      return;
    }
    res.end(
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: `reply #${requests.length} (${entry.body.messages.length} messages)`,
            },
            finish_reason: "stop",
          },
        ],
      }),
    );
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe("openai runner", () => {
  it("speaks chat-completions with history per session key, the API key from the env, and honours timeouts", async () => {
    const chat = await startChatServer();
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({
        runner: {
          kind: "openai",
          baseUrl: `${chat.url}/v1/`,
          model: "local-model",
          apiKeyEnv: "TEST_LLM_KEY",
        },
      }),
    );
    const { args, record } = serveArgs(dir, config);
    const gateway = await startServe(args, { env: { TEST_LLM_KEY: "sk-local-test" } });

    const first = await runTurn(gateway, record, {
      message: "first question",
      sessionKey: "hook:llm",
      sessionMode: "persistent",
    });
    expect(first).toMatchObject({ status: "ok", reply: "reply #1 (1 messages)" });
    expect(chat.requests[0]).toMatchObject({
      url: "/v1/chat/completions",
      authorization: "Bearer sk-local-test",
    });
    expect(chat.requests[0]!.body.model).toBe("local-model");
    expect(chat.requests[0]!.body.messages[0]).toMatchObject({ role: "user" });
    expect(chat.requests[0]!.body.messages[0]!.content).toContain("first question");

    const second = await runTurn(gateway, record, {
      message: "follow-up",
      sessionKey: "hook:llm",
      sessionMode: "persistent",
      model: "local/other-model",
    });
    expect(second).toMatchObject({ status: "ok", reply: "reply #2 (3 messages)" });
    const history = chat.requests[1]!.body;
    expect(history.model).toBe("other-model");
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(history.messages[1]!.content).toBe("reply #1 (1 messages)");

    const failed = await runTurn(gateway, record, { message: "ERROR please" });
    expect(failed).toMatchObject({
      status: "error",
      error: "chat-completions endpoint answered 500: model not loaded",
    });

    const hung = await runTurn(gateway, record, { message: "HANG here", timeoutSeconds: 1 });
    expect(hung).toMatchObject({ status: "timeout" });
    const hungRequest = chat.requests.at(-1)!;
    expect(await hungRequest.closed).toBe(true);
    const summary = readRecord(record).find(
      (line) => line.event === "session:system-event" && String(line.payload.text).includes("(timeout)"),
    );
    expect(summary).toBeDefined();
  });
});

const FLOOD_BYTES = 300 * 1_048_576;

/**
 * A hostile chat-completions endpoint: FLOOD streams a 300 MB answer (chunked, no length) as fast as the client
 * reads it; DRIP sends the start of an answer and then one byte every 100 ms, forever.
 */
async function startHostileChatServer(): Promise<{ url: string; flooded: () => number }> {
  let flooded = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const last: string = JSON.parse(text).messages.at(-1).content;
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"choices":[{"message":{"role":"assistant","content":"');
    if (last.includes("DRIP")) {
      const drip = setInterval(() => res.write("x"), 100);
      res.once("close", () => clearInterval(drip));
      return;
    }
    const chunk = Buffer.alloc(65_536, "x");
    const pump = () => {
      while (flooded < FLOOD_BYTES && !res.destroyed) {
        flooded += chunk.length;
        if (!res.write(chunk)) {
          res.once("drain", pump);
          return;
        }
      }
      res.end('"}}]}');
    };
    pump();
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, flooded: () => flooded };
}

/** Times `GET /metrics` back to back until `stop` resolves: the longest answer is the gateway's longest stall. */
async function longestAnswerMs(baseUrl: string, stop: Promise<unknown>): Promise<number> {
  let stopped = false;
  void stop.finally(() => {
    stopped = true;
  });
  let longest = 0;
  while (!stopped) {
    const started = performance.now();
    await (await fetch(`${baseUrl}/metrics`)).text();
    longest = Math.max(longest, performance.now() - started);
  }
  return longest;
}

describe("openai runner reply bounds", () => {
  it("stops reading a 300 MB reply at maxReplyBytes and a dripping one at replyTimeoutSeconds: errors, flat memory, no stall", async () => {
    const chat = await startHostileChatServer();
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({
        runner: { kind: "openai", baseUrl: chat.url, model: "m", replyTimeoutSeconds: 1 },
      }),
    );
    const { args, record } = serveArgs(dir, config);
    const gateway = await startServeProcess(args);
    const pid = gateway.child.pid!;
    await (await fetch(`${gateway.url}/metrics`)).text();
    const peakBeforeKb = procStatusKb(pid, "VmHWM");

    const flood = runTurn(gateway, record, { message: "FLOOD please" });
    const stallMs = await longestAnswerMs(gateway.url, flood);
    const flooded = await flood;
    const peakAfterKb = procStatusKb(pid, "VmHWM");
    const figures = `peak RSS ${peakBeforeKb} -> ${peakAfterKb} kB, longest /metrics answer ${Math.round(stallMs)} ms`;
    expect(flooded).toMatchObject({ status: "error" });
    expect(flooded.error).toMatch(/reply from .* is larger than 1048576 bytes/);
    expect(peakAfterKb - peakBeforeKb, figures).toBeLessThan(64 * 1024);
    expect(stallMs, figures).toBeLessThan(1_000);
    // The connection was closed near the cap, not after the whole 300 MB.
    expect(chat.flooded()).toBeLessThan(64 * 1_048_576);

    const dripped = await runTurn(gateway, record, { message: "DRIP please" });
    expect(dripped).toMatchObject({ status: "error" });
    expect(dripped.error).toMatch(/took longer than 1s/);
  });
});
