/** @module Delivery subsystem: resolves `last`, writes each delivery to the outbox once per run, logs it, moves the last route. */

import type { DeliverySend, HookBus } from "../events.js";
import { checkChannel } from "../index.js";
import type { LastRoute } from "./gateway-config.js";
import type { GatewayLogger } from "./logger.js";
import type { Outbox } from "./outbox.js";
import type { OutboxEntry } from "./state-records.js";

/** Where `last` goes when the main session has no last route yet. */
export const FALLBACK_CHANNEL = "whatsapp";

export interface DeliveryDeps {
  bus: HookBus;
  outbox: Outbox;
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
    // The plugin re-emits, with its original run id, a delivery it is not sure was handed over before a crash:
    // the first one went out (and moved the route) already.
    if (deps.outbox.has(send.runId)) {
      deps.logger.debug("duplicate delivery ignored", {
        runId: send.runId,
        requestId: send.source.requestId,
      });
      return;
    }
    const resolved = resolveDelivery(send, deps.lastRoute(), offered);
    const entry: OutboxEntry = {
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
    // The result, for the plugin's journal: the outbox row is this gateway's "sent"; never the text.
    deps.bus.emit(
      "delivery:result",
      resolved.reason === undefined
        ? { source: send.source, runId: send.runId, status: "sent" }
        : { source: send.source, runId: send.runId, status: "failed", reason: resolved.reason },
    );
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
    // Debug, not info: the outbox row is the record, and "agent turn finished" already marks the turn at info.
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
