/** @module What a finished agent run publishes: the summary line and whether its reply is worth delivering. */
import type { AgentTurnFinished } from "../events.js";

export const SUMMARY_MAX_CHARS = 500;

/** `HEARTBEAT_OK` alone, give or take whitespace, punctuation and markdown emphasis. */
const HEARTBEAT_ACK = /^[\s\p{P}*_~`]*heartbeat_ok[\s\p{P}*_~`]*$/iu;

export function isHeartbeatAck(reply: string): boolean {
  return HEARTBEAT_ACK.test(reply);
}

/** `NO_REPLY` alone: the agent chose to say nothing (the silent-reply token OpenClaw's agents use). */
const SILENT_REPLY = /^[\s\p{P}*_~`]*no_reply[\s\p{P}*_~`]*$/iu;

/** What a turn's reply was, without its text: what a caller waiting for the completion is told. */
export type ReplyKind = "visible" | "silent" | "heartbeat-ack" | "none";

/**
 * The reply's kind from its text; without text, a host's word that the turn chose silence (OpenClaw's `silent`
 * terminal reply, which comes without its text) still counts as silence.
 */
export function replyKind(reply: string | undefined, disposition?: string): ReplyKind {
  const text = reply?.trim();
  if (!text) return disposition === "silent" ? "silent" : "none";
  if (isHeartbeatAck(text)) return "heartbeat-ack";
  if (SILENT_REPLY.test(text)) return "silent";
  return "visible";
}

/** OpenClaw's word for a reply (`replyDisposition`), beside ours: a heartbeat's ack is silence, no reply is empty. */
export type ReplyDisposition = "visible" | "silent" | "empty";

export const REPLY_DISPOSITION: Readonly<Record<ReplyKind, ReplyDisposition>> = {
  visible: "visible",
  silent: "silent",
  "heartbeat-ack": "silent",
  none: "empty",
};

/** The reply's first paragraph, cut to the summary limit. */
export function firstParagraph(reply: string): string {
  const paragraph =
    reply
      .trim()
      .split(/\n\s*\n/, 1)[0]
      ?.trim() ?? "";
  return paragraph.length > SUMMARY_MAX_CHARS ? `${paragraph.slice(0, SUMMARY_MAX_CHARS - 1)}…` : paragraph;
}

type Finished = Pick<AgentTurnFinished, "status" | "summary" | "reply" | "error">;

/**
 * The summary published into the main session for every finished or timed-out run, in two parts: the
 * prefix (`<name>:`, `<name> (error):`, `<name> (timeout):`) and the text after it, which came from the run.
 */
export function summaryParts(name: string, finished: Finished): { prefix: string; text: string } {
  if (finished.status === "error")
    return { prefix: `${name} (error):`, text: finished.error?.trim() || "the agent run failed" };
  if (finished.status === "timeout") {
    return {
      prefix: `${name} (timeout):`,
      text: finished.error?.trim() || "the agent run did not finish in time",
    };
  }
  const summary = finished.summary?.trim() || (finished.reply ? firstParagraph(finished.reply) : "");
  return { prefix: `${name}:`, text: summary || "(no reply)" };
}

/** A reply is delivered when the run succeeded and it says something: not a heartbeat acknowledgement, not silence. */
export function deliverableReply(finished: Pick<AgentTurnFinished, "status" | "reply">): string | undefined {
  if (finished.status !== "ok" || replyKind(finished.reply) !== "visible") return undefined;
  return finished.reply!.trim();
}
