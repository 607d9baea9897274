/** @module What a finished agent run publishes: the summary line and whether its reply is worth delivering. */
import type { AgentTurnFinished } from "../events.js";

export const SUMMARY_MAX_CHARS = 500;

/** `HEARTBEAT_OK` alone, give or take whitespace, punctuation and markdown emphasis. */
const HEARTBEAT_ACK = /^[\s\p{P}*_~`]*heartbeat_ok[\s\p{P}*_~`]*$/iu;

export function isHeartbeatAck(reply: string): boolean {
  return HEARTBEAT_ACK.test(reply);
}

/** The reply's first paragraph, cut to the summary limit. */
export function firstParagraph(reply: string): string {
  const paragraph =
    reply
      .trim()
      .split(/\n\s*\n/, 1)[0]
      ?.trim() ?? "";
  return paragraph.length > SUMMARY_MAX_CHARS ? `${paragraph.slice(0, SUMMARY_MAX_CHARS - 1)}…` : paragraph;
}

/** The line published into the main session for every finished or timed-out run. */
export function summaryLine(
  name: string,
  finished: Pick<AgentTurnFinished, "status" | "summary" | "reply" | "error">,
): string {
  if (finished.status === "error")
    return `${name} (error): ${finished.error?.trim() || "the agent run failed"}`;
  if (finished.status === "timeout") {
    return `${name} (timeout): ${finished.error?.trim() || "the agent run did not finish in time"}`;
  }
  const summary = finished.summary?.trim() || (finished.reply ? firstParagraph(finished.reply) : "");
  return `${name}: ${summary || "(no reply)"}`;
}

/** A reply is delivered when the run succeeded and it says more than a heartbeat acknowledgement. */
export function deliverableReply(finished: Pick<AgentTurnFinished, "status" | "reply">): string | undefined {
  if (finished.status !== "ok") return undefined;
  const reply = finished.reply?.trim();
  if (!reply || isHeartbeatAck(reply)) return undefined;
  return reply;
}
