/** @module End to end: dovecot → `hooks mailbox run` → `hooks serve` with the mailbox preset → one agent turn per message. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/openclaw-launch.mjs";
import { type DovecotServer, dovecotSkipReason, startDovecot } from "../helpers/dovecot.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = path.join(ROOT, "bin/hooks.js");
const TOKEN = "e2e-hook-token-abcdefghijklmnopqrstuvwxyz";
const skipReason = dovecotSkipReason();

interface RecordedEvent {
  event: string;
  payload: Record<string, unknown> & { source?: { hook?: string; mappingId?: string } };
}

interface Child {
  process: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp): Promise<void>;
  stop(): Promise<number | null>;
}

function startCli(args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of [...listeners]) listener();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    process: child,
    output: () => output,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve();
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            listeners.delete(check);
            reject(new Error(`exited (${child.exitCode}) before ${pattern}:\n${output}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}:\n${output}`));
        }, 15_000);
        listeners.add(check);
        child.once("exit", check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** The record file is the gateway's only outward trace of agent turns; poll it briefly until enough are in. */
async function waitForEvents(
  file: string,
  count: (events: RecordedEvent[]) => boolean,
  context: () => string,
): Promise<RecordedEvent[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = existsSync(file) ? await readFile(file, "utf8") : "";
    const events = text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as RecordedEvent);
    if (count(events)) return events;
    if (Date.now() > deadline)
      throw new Error(`record file has ${events.length} events:\n${text}\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(skipReason !== undefined)(
  `mailbox preset end to end${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let server: DovecotServer;
    let dir: string;
    const children: Child[] = [];

    beforeAll(async () => {
      server = await startDovecot();
      await server.addUser("eve", "eve-password");
      dir = await mkdtemp(path.join(os.tmpdir(), "hooks-mailbox-e2e-"));
    });
    afterAll(async () => {
      for (const child of children) await child.stop();
      await server?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("turns each new message into one agent turn with the preset's session key and text", async () => {
      const gatewayPort = await freePort();
      const configFile = path.join(dir, "gateway.json5");
      // The helper finds the gateway through server.port and hooks.path; no hookUrl is configured.
      await writeFile(
        configFile,
        JSON.stringify({
          server: { host: "127.0.0.1", port: gatewayPort },
          heartbeat: { everySeconds: 0 },
          hooks: {
            enabled: true,
            token: TOKEN,
            path: "/in",
            presets: ["mailbox"],
            mailbox: {
              host: server.host,
              port: server.port,
              security: "none",
              user: "eve",
              passwordEnv: "EVE_PASSWORD",
              includeBody: true,
            },
          },
        }),
      );
      const recordFile = path.join(dir, "events.jsonl");
      const env = { ...process.env, EVE_PASSWORD: "eve-password" };
      const gateway = startCli(
        [
          "serve",
          "--config",
          configFile,
          "--state-dir",
          path.join(dir, "gateway-state"),
          "--record",
          recordFile,
        ],
        env,
      );
      children.push(gateway);
      await gateway.waitFor(/listening on/);
      const helper = startCli(
        ["mailbox", "run", "--config", configFile, "--state-dir", path.join(dir, "helper-state")],
        env,
      );
      children.push(helper);
      await helper.waitFor(/watching "INBOX"/);

      await server.append("eve", "INBOX", [
        { from: "Ann <ann@example.org>", subject: "Lunch on Friday?", text: "Are you free at noon?" },
        { from: "Bob <bob@example.org>", subject: "Invoice 42", text: "Please find the invoice attached." },
      ]);
      const events = await waitForEvents(
        recordFile,
        (all) => all.filter((e) => e.event === "session:agent-turn-finished").length >= 2,
        () => `gateway output:\n${gateway.output()}\nhelper output:\n${helper.output()}`,
      );

      const { uidValidity } = await server.status("eve", "INBOX");
      const turns = events.filter((e) => e.event === "session:agent-turn").map((e) => e.payload);
      expect(turns).toHaveLength(2);
      expect(turns.map((turn) => turn["sessionKey"])).toEqual([
        `hook:mailbox:${uidValidity}-1`,
        `hook:mailbox:${uidValidity}-2`,
      ]);
      expect(turns[0]).toMatchObject({ name: "Mailbox", untrusted: true, source: { mappingId: "mailbox" } });
      expect(turns[0]?.["raw"]).toBe(
        "New email from Ann <ann@example.org>\nSubject: Lunch on Friday?\nAre you free at noon?\nAre you free at noon?",
      );
      expect(String(turns[1]?.["raw"])).toContain("Subject: Invoice 42");
      // The text the model sees is wrapped as untrusted e-mail content.
      expect(String(turns[0]?.["message"])).toContain("Email");
      expect(String(turns[0]?.["message"])).toContain("Lunch on Friday?");
      await helper.waitFor(/delivered/);

      expect(await helper.stop()).toBe(0);
      expect(await gateway.stop()).toBe(0);
      expect(helper.output()).not.toContain("Lunch");
      expect(helper.output()).not.toContain(TOKEN);
    });
  },
);
