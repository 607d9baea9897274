/** @module Delivery subsystem: resolves `last`, writes each delivery to the outbox, logs it, moves the last route. */

import type { DeliverySend, HookBus } from "../events.js";
import { checkChannel } from "../index.js";
import type { LastRoute } from "./gateway-config.js";
import type { JsonlWriter } from "./jsonl-file.js";
import type { GatewayLogger } from "./logger.js";

/** Where `last` goes when the main session has no last route yet (SPEC §8). */
export const FALLBACK_CHANNEL = "whatsapp";

export interface OutboxEntry {
  at: string;
  runId: string;
  requestId: string;
  hook: string;
  mappingId?: string;
  /** The channel the action asked for (`last` included). */
  requested: string;
  channel: string;
  to?: string;
  text: string;
  status: "delivered" | "undeliverable";
  reason?: string;
}

export interface DeliveryDeps {
  bus: HookBus;
  outbox: JsonlWriter;
  channels: readonly string[];
  logger: GatewayLogger;
  lastRoute(): LastRoute | undefined;
  setLastRoute(route: LastRoute): void;
}

export interface DeliverySubsystem {
  stop(): void;
}

/** The channel and recipient a delivery goes to, or why it cannot go anywhere. */
export function resolveDelivery(
  send: Pick<DeliverySend, "channel" | "to">,
  last: LastRoute | undefined,
  offered: ReadonlySet<string>,
): { channel: string; to?: string; reason?: string } {
  const channel = send.channel === "last" ? (last?.channel ?? FALLBACK_CHANNEL) : send.channel;
  // The last recipient only makes sense on the channel it came from.
  const to = send.to ?? (last?.channel === channel ? last.to : undefined);
  const checked = checkChannel(channel, to, offered);
  const base = to === undefined ? { channel } : { channel, to };
  if (!checked.ok) return { ...base, reason: checked.message };
  if (to === undefined)
    return { ...base, reason: `no recipient: the action names none and ${channel} has no last recipient` };
  return base;
}

export function startDeliverySubsystem(deps: DeliveryDeps): DeliverySubsystem {
  const offered = new Set(deps.channels);

  const onSend = (send: DeliverySend) => {
    const resolved = resolveDelivery(send, deps.lastRoute(), offered);
    const entry: OutboxEntry = {
      at: new Date().toISOString(),
      runId: send.runId,
      requestId: send.source.requestId,
      hook: send.source.hook,
      requested: send.channel,
      channel: resolved.channel,
      text: send.text,
      status: resolved.reason === undefined ? "delivered" : "undeliverable",
    };
    if (send.source.mappingId !== undefined) entry.mappingId = send.source.mappingId;
    if (resolved.to !== undefined) entry.to = resolved.to;
    if (resolved.reason !== undefined) entry.reason = resolved.reason;
    deps.outbox.append(entry);
    // The text and the recipient stay in the outbox; the log only says that something went where.
    const fields = {
      runId: send.runId,
      requestId: send.source.requestId,
      channel: resolved.channel,
      chars: send.text.length,
    };
    if (resolved.reason !== undefined) {
      deps.logger.warn(`delivery not sent: ${resolved.reason}`, fields);
      return;
    }
    // Debug, not info: the outbox line is the record, and "agent turn finished" already marks the turn at info.
    deps.logger.debug("delivered to outbox", fields);
    // Only a delivery that reached someone moves the route; `last` then means "where the last reply went".
    if (resolved.to !== undefined)
      deps.setLastRoute({ channel: resolved.channel as LastRoute["channel"], to: resolved.to });
  };

  deps.bus.on("delivery:send", onSend);
  return {
    stop() {
      deps.bus.off("delivery:send", onSend);
    },
  };
}
