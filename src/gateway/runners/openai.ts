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
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: endpointModel(turn.model, config.model), messages }),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw abortError(signal);
        throw new Error(`chat-completions request to ${url} failed: ${(error as Error).message}`);
      }
      const text = await response.text();
      let body: ChatCompletion | undefined;
      try {
        body = JSON.parse(text) as ChatCompletion;
      } catch {
        body = undefined;
      }
      if (!response.ok) {
        const reason =
          typeof body?.error?.message === "string" ? `: ${body.error.message.slice(0, 300)}` : "";
        throw new Error(`chat-completions endpoint answered ${response.status}${reason}`);
      }
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== "string")
        throw new Error("chat-completions answer has no choices[0].message.content");
      return { reply: content.trim() };
    },
  };
}
