/** @module The answer of a request that waited for its agent turn: the admission answer plus how the turn ended. */
import type { RunCompletion } from "../actions/run-completion.js";
import { REPLY_DISPOSITION } from "../actions/summarize-run.js";
import type { Resolution } from "./stages/resolve.js";

/**
 * `{ ok, runId, sessionKey, mappingId?, status, reply, replyDisposition, delivered, replyText? }`: `reply` is our
 * finer word, `replyDisposition` OpenClaw's for the same (callers written for its hooks read it). The reply's text only when the
 * operator chose to expose replies: it is the model's answer to external content, and the caller may be a
 * third party's automation.
 */
export function completionBody(
  resolution: Resolution,
  completion: RunCompletion,
  exposeReplies: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...resolution.body,
    status: completion.status,
    reply: completion.reply,
    replyDisposition: REPLY_DISPOSITION[completion.reply],
    delivered: completion.delivered,
  };
  if (exposeReplies && completion.replyText !== undefined) body.replyText = completion.replyText;
  return body;
}
