/** @module Test harness: a loopback OpenAI-compatible chat-completions stub that records every prompt, so an end-to-end test can see what reached the model. */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { AwaitedLog } from "./awaited-log.js";
import { listenOnLoopback, readBody, sendJson } from "./loopback-stub.js";

/** The one model the stub lists; the OpenClaw provider config names it (see openclaw-gateway.ts). */
export const STUB_MODEL_ID = "stub-model";
export const DEFAULT_STUB_REPLY = "Stub model reply: noted.";

export interface StubModelOptions {
  /** The assistant's answer to a request, given its prompt text. Default: a fixed short text. */
  reply?: (prompt: string) => string;
}

export interface StubModel {
  /** e.g. `http://127.0.0.1:41234/v1`, what an OpenAI-compatible client takes as its base URL. */
  readonly baseUrl: string;
  /** One entry per chat-completions request: the text of all its messages, joined by newlines. */
  readonly prompts: string[];
  /** The parsed JSON body of each chat-completions request, in arrival order (for debugging a failure). */
  readonly requests: unknown[];
  /** Resolves with the first prompt (already received or still to come) that passes `predicate`. */
  waitForPrompt(predicate: (prompt: string) => boolean, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

interface ChatRequest {
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

/** A message's text: `content` is a string, or an array of parts of which only `text` parts carry text. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      if (typeof part === "string") return part;
      if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
        return (part as { text: string }).text;
      }
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}

export function promptOf(body: ChatRequest): string {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  return messages
    .map((message) => contentText(message?.content))
    .filter((text) => text !== "")
    .join("\n");
}

/** A rough token count: the usage numbers only need to be plausible, not exact. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Splits the reply in two content deltas, so a client that only handles one chunk would show it. */
function contentDeltas(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

export async function startStubModel(options: StubModelOptions = {}): Promise<StubModel> {
  const reply = options.reply ?? (() => DEFAULT_STUB_REPLY);
  const log = new AwaitedLog<string>("stub model");
  const prompts = log.items;
  const requests: unknown[] = [];
  const record = (prompt: string): void => log.push(prompt);

  const completions = (body: ChatRequest, res: http.ServerResponse): void => {
    const prompt = promptOf(body);
    requests.push(body);
    // A throwing reply function is a test bug: answer 500 so the client's error is visible, and still record.
    let text: string;
    try {
      text = reply(prompt);
    } catch (error) {
      record(prompt);
      sendJson(res, 500, { error: { message: String(error), type: "stub_error" } });
      return;
    }
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === "string" ? body.model : STUB_MODEL_ID;
    const usage = {
      prompt_tokens: tokens(prompt),
      completion_tokens: tokens(text),
      total_tokens: tokens(prompt) + tokens(text),
    };

    if (body.stream !== true) {
      sendJson(res, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage,
      });
      record(prompt);
      return;
    }

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
      const data = { id, object: "chat.completion.chunk", created, model, choices, ...extra };
      res.write(`data: ${JSON.stringify(data)}\n\n`);
    };
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    for (const piece of contentDeltas(text)) {
      chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]);
    }
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
    // OpenAI sends usage as a last chunk with empty choices, only when the client asked for it.
    if (body.stream_options?.include_usage === true) chunk([], { usage });
    res.end("data: [DONE]\n\n");
    // Recorded after the answer is written, so a test that proceeds on the prompt does not race the reply.
    record(prompt);
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: [{ id: STUB_MODEL_ID, object: "model", created: 0, owned_by: "hooks-intake-tests" }],
      });
      return;
    }
    if (req.method === "POST" && path === "/v1/chat/completions") {
      readBody(req).then(
        (bytes) => {
          const raw = bytes.toString("utf8");
          let body: ChatRequest;
          try {
            body = JSON.parse(raw) as ChatRequest;
          } catch {
            sendJson(res, 400, { error: { message: "invalid JSON", type: "invalid_request_error" } });
            return;
          }
          completions(body, res);
        },
        () => res.destroy(),
      );
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: "not_found" } });
  });

  const port = await listenOnLoopback(server);

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    prompts,
    requests,
    waitForPrompt(predicate, timeoutMs) {
      return log.waitFor(
        predicate,
        timeoutMs,
        () =>
          `no matching prompt within ${timeoutMs} ms (${prompts.length} request(s) seen; last: ${JSON.stringify(
            (prompts.at(-1) ?? "").slice(-500),
          )})`,
      );
    },
    async close() {
      log.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Streaming clients may keep connections alive; close() alone would wait for them.
        server.closeAllConnections();
      });
    },
  };
}
