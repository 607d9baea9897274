/** @module What every agent runner receives and returns; the session subsystem owns timeouts and history. */
import type { AgentTurn } from "../../events.js";

/** One entry of a session's conversation, as kept in the state database's `messages` table and sent to chat models. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface RunnerInput {
  turn: AgentTurn;
  /** Earlier messages of this session key, oldest first, without the current message. */
  history: readonly ChatMessage[];
  /** Aborted on timeout or shutdown; a runner stops its work (kills its child, cancels its request). */
  signal: AbortSignal;
}

export interface RunnerOutput {
  reply: string;
  summary?: string;
}

export interface AgentRunner {
  readonly kind: string;
  run(input: RunnerInput): Promise<RunnerOutput>;
}

/** The reason a signal was aborted with, as an Error for the caller's `catch`. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(String(reason ?? "aborted"));
}
