/** @module The `openai` runner: one chat-completions request per turn to any OpenAI-compatible endpoint. */
import type { OpenAiRunnerConfig } from "../gateway-config.js";
import { type AgentRunner, abortError, type ChatMessage } from "./runner-types.js";

/** Only the most recent messages go with each request, so a long conversation cannot outgrow the request. */
export const MAX_HISTORY_MESSAGES = 40;

/** `provider/model` refs name the provider first; the endpoint wants only the model part. */
export function endpointModel(turnModel: string | undefined, configured: string): string {
  if (turnModel === undefined) return configured;
  const slash = turnModel.indexOf("/");
  return slash === -1 ? turnModel : turnModel.slice(slash + 1);
}

export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
}

interface ChatCompletion {
  choices?: Array<{ message?: { content?: unknown } }>;
  error?: { message?: unknown };
}

/** A reply past `maxReplyBytes`: its message is the turn's error as it stands. */
class ReplyTooLarge extends Error {}

/**
 * The reply's text, read chunk by chunk as it arrives and given up as soon as it passes `maxBytes`, so a huge or
 * endless reply costs at most `maxBytes` of memory and never one long parse.
 */
async function readReply(response: Response, maxBytes: number, url: string): Promise<string> {
  const tooLarge = () =>
    new ReplyTooLarge(`chat-completions reply from ${url} is larger than ${maxBytes} bytes`);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw tooLarge();
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Not awaited: a stalled stream may never settle its cancel; the caller's abort closes the connection.
      reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function createOpenAiRunner(
  config: OpenAiRunnerConfig,
  env: NodeJS.ProcessEnv = process.env,
): AgentRunner {
  const url = chatCompletionsUrl(config.baseUrl);
  return {
    kind: "openai",
    async run({ turn, history, signal }) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      const key = config.apiKeyEnv ? env[config.apiKeyEnv] : undefined;
      if (key) headers.authorization = `Bearer ${key}`;
      const messages: ChatMessage[] = [
        ...history.slice(-MAX_HISTORY_MESSAGES),
        { role: "user", content: turn.message },
      ];
      // The runner's own stop (reply too large or too slow), beside the turn's (its deadline, the gateway's stop).
      const own = new AbortController();
      const timer = setTimeout(
        () =>
          own.abort(
            new Error(`chat-completions request to ${url} took longer than ${config.replyTimeoutSeconds}s`),
          ),
        config.replyTimeoutSeconds * 1000,
      );
      let status: number;
      let ok: boolean;
      let text: string;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: endpointModel(turn.model, config.model), messages }),
          signal: AbortSignal.any([signal, own.signal]),
        });
        ({ status, ok } = response);
        text = await readReply(response, config.maxReplyBytes, url);
      } catch (error) {
        if (signal.aborted) throw abortError(signal);
        if (own.signal.aborted) throw abortError(own.signal);
        // Past the cap: the connection is closed now, not when the endpoint finishes sending.
        own.abort(error);
        if (error instanceof ReplyTooLarge) throw error;
        throw new Error(`chat-completions request to ${url} failed: ${(error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
      let body: ChatCompletion | undefined;
      try {
        body = JSON.parse(text) as ChatCompletion;
      } catch {
        body = undefined;
      }
      if (!ok) {
        const reason =
          typeof body?.error?.message === "string" ? `: ${body.error.message.slice(0, 300)}` : "";
        throw new Error(`chat-completions endpoint answered ${status}${reason}`);
      }
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== "string")
        throw new Error("chat-completions answer has no choices[0].message.content");
      return { reply: content.trim() };
    },
  };
}
