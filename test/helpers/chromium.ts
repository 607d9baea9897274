/** @module Drives the machine's Chromium over the DevTools protocol on a pipe (`--remote-debugging-pipe`): no driver package, nothing downloaded. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";

type Params = Record<string, unknown>;
interface Message {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: { message: string };
  sessionId?: string;
}

/** What the page did that a test checks afterwards: dialogs it opened, errors it threw, what the console said. */
export interface PageRecord {
  dialogs: string[];
  errors: string[];
  console: string[];
  /** Every response body the page received (documents, scripts, API answers), by URL. */
  responses: { url: string; status: number; body: string }[];
}

export interface BrowserPage {
  readonly record: PageRecord;
  goto(url: string): Promise<void>;
  /** The expression's value (awaited, returned by value); throws what the page threw. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls the expression until it is truthy; its value. */
  waitFor<T = unknown>(expression: string, timeoutMs?: number): Promise<T>;
  click(selector: string): Promise<void>;
  /** Sets an input's value and fires `input`, as typing does. */
  type(selector: string, value: string): Promise<void>;
  screenshot(file: string): Promise<void>;
  /** Response bodies still being fetched are in `record.responses` once this resolves. */
  settle(): Promise<void>;
  /**
   * Evaluates in the first child frame whose URL contains `urlPart` (in this page's process or its own), in a
   * world of its own: the frame's DOM, not its globals. Undefined while there is no such frame.
   */
  evaluateInFrame<T = unknown>(urlPart: string, expression: string): Promise<T | undefined>;
}

export interface Browser {
  newPage(): Promise<BrowserPage>;
  close(): Promise<void>;
}

export async function launchChromium(executable = "/usr/bin/chromium"): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), "hooks-chromium-"));
  const child: ChildProcess = spawn(
    executable,
    [
      "--headless=new",
      "--remote-debugging-pipe",
      // The tests run as root in CI containers, where Chromium's sandbox cannot start.
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  // A browser that never started (or died) closes its pipes: the calls fail with the reason below instead.
  toBrowser.on("error", () => undefined);
  fromBrowser.on("error", () => undefined);
  let nextId = 1;
  const waiting = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  const listeners = new Set<(message: Message) => void>();
  let buffered = "";
  fromBrowser.setEncoding("utf8");
  fromBrowser.on("data", (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\0"); end !== -1; end = buffered.indexOf("\0")) {
      const message = JSON.parse(buffered.slice(0, end)) as Message;
      buffered = buffered.slice(end + 1);
      if (message.id !== undefined) {
        const pending = waiting.get(message.id);
        waiting.delete(message.id);
        if (message.error) pending?.reject(new Error(message.error.message));
        else pending?.resolve(message.result);
      } else for (const listener of listeners) listener(message);
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Not installed, or not executable: every call fails with why, instead of waiting for an answer.
  let failed: Error | undefined;
  child.once("error", (error) => {
    failed = new Error(`chromium (${executable}) did not start: ${error.message}`);
    for (const pending of waiting.values()) pending.reject(failed);
    waiting.clear();
  });
  child.once("exit", () => {
    for (const pending of waiting.values()) pending.reject(new Error("chromium exited"));
    waiting.clear();
  });

  function send(method: string, params: Params = {}, sessionId?: string): Promise<any> {
    if (failed) return Promise.reject(failed);
    const id = nextId++;
    const message = sessionId === undefined ? { id, method, params } : { id, method, params, sessionId };
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      toBrowser.write(`${JSON.stringify(message)}\0`);
    });
  }

  function on(sessionId: string, handler: (method: string, params: any) => void): void {
    listeners.add((message) => {
      if (message.sessionId === sessionId && message.method) handler(message.method, message.params);
    });
  }

  await send("Browser.getVersion");

  return {
    async newPage() {
      const { targetId } = await send("Target.createTarget", { url: "about:blank" });
      const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
      const call = (method: string, params?: Params) => send(method, params, sessionId);
      const record: PageRecord = { dialogs: [], errors: [], console: [], responses: [] };
      const loads: (() => void)[] = [];
      const bodies: Promise<void>[] = [];
      const responses = new Map<string, { url: string; status: number }>();
      on(sessionId, (method, params) => {
        if (method === "Page.loadEventFired") for (const done of loads.splice(0)) done();
        if (method === "Page.javascriptDialogOpening") {
          record.dialogs.push(`${params.type}: ${params.message}`);
          void call("Page.handleJavaScriptDialog", { accept: false });
        }
        if (method === "Runtime.exceptionThrown")
          record.errors.push(
            params.exceptionDetails?.exception?.description ?? params.exceptionDetails?.text,
          );
        if (method === "Runtime.consoleAPICalled")
          record.console.push(params.args.map((arg: any) => arg.value ?? arg.description).join(" "));
        if (method === "Log.entryAdded") record.console.push(`${params.entry.source}: ${params.entry.text}`);
        if (method === "Network.responseReceived")
          responses.set(params.requestId, { url: params.response.url, status: params.response.status });
        if (method === "Network.loadingFinished") {
          const seen = responses.get(params.requestId);
          if (!seen) return;
          bodies.push(
            call("Network.getResponseBody", { requestId: params.requestId }).then(
              ({ body, base64Encoded }) => {
                record.responses.push({
                  ...seen,
                  body: base64Encoded ? Buffer.from(body, "base64").toString("utf8") : body,
                });
              },
              () => undefined,
            ),
          );
        }
      });
      // Frames another process renders (a sandboxed frame may be one) are attached as sessions of their own.
      const frameSessions = new Map<string, string>();
      on(sessionId, (method, params) => {
        if (method === "Target.attachedToTarget" && params.targetInfo.type === "iframe")
          frameSessions.set(params.targetInfo.targetId, params.sessionId);
        if (method === "Target.detachedFromTarget")
          for (const [target, session] of frameSessions)
            if (session === params.sessionId) frameSessions.delete(target);
      });
      await Promise.all([
        call("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }),
        call("Page.enable"),
        call("Runtime.enable"),
        call("Log.enable"),
        call("Network.enable"),
        call("Emulation.setDeviceMetricsOverride", {
          width: 1400,
          height: 1000,
          deviceScaleFactor: 1,
          mobile: false,
        }),
      ]);

      const evaluate = async <T>(expression: string): Promise<T> => {
        const answer = await call("Runtime.evaluate", {
          expression,
          awaitPromise: true,
          returnByValue: true,
        });
        if (answer.exceptionDetails) {
          throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
        }
        return answer.result.value as T;
      };

      return {
        record,
        async goto(url) {
          const loaded = new Promise<void>((resolve) => loads.push(resolve));
          const { loaderId } = await call("Page.navigate", { url });
          // A change of the fragment only loads nothing: there is no load event to wait for.
          if (loaderId !== undefined) await loaded;
        },
        evaluate,
        async waitFor<T>(expression: string, timeoutMs = 5_000): Promise<T> {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const value = await evaluate<T>(expression).catch(() => undefined);
            if (value) return value;
            if (Date.now() > deadline) throw new Error(`timed out waiting for: ${expression}`);
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
        },
        async click(selector) {
          await evaluate(`document.querySelector(${JSON.stringify(selector)}).click()`);
        },
        async type(selector, value) {
          await evaluate(
            `(() => { const input = document.querySelector(${JSON.stringify(selector)}); input.value = ${JSON.stringify(value)}; input.dispatchEvent(new Event("input", { bubbles: true })); })()`,
          );
        },
        async screenshot(file) {
          const { data } = await call("Page.captureScreenshot", { format: "png" });
          writeFileSync(file, Buffer.from(data, "base64"));
        },
        async settle() {
          await Promise.all(bodies);
        },
        async evaluateInFrame<T>(urlPart: string, expression: string): Promise<T | undefined> {
          const options = { expression, awaitPromise: true, returnByValue: true };
          const answerOf = (answer: any): T => {
            if (answer.exceptionDetails)
              throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
            return answer.result.value as T;
          };
          const { frameTree } = await call("Page.getFrameTree");
          const children = (tree: any): any[] =>
            (tree.childFrames ?? []).flatMap((child: any) => [child.frame, ...children(child)]);
          const local = children(frameTree).find((frame) => String(frame.url).includes(urlPart));
          if (local) {
            const { executionContextId } = await call("Page.createIsolatedWorld", { frameId: local.id });
            return answerOf(await call("Runtime.evaluate", { ...options, contextId: executionContextId }));
          }
          const { targetInfos } = await send("Target.getTargets");
          for (const info of targetInfos) {
            const frameSession = frameSessions.get(info.targetId);
            if (info.type !== "iframe" || !frameSession || !String(info.url).includes(urlPart)) continue;
            return answerOf(await send("Runtime.evaluate", options, frameSession));
          }
          return undefined;
        },
      };
    },
    async close() {
      await send("Browser.close").catch(() => undefined);
      const killed = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(killed);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
