/** @module Sends delivered replies through OpenClaw's channel outbound adapters; a channel it cannot reach is a logged failure. */
import type { DeliveryResult, DeliverySend, HookBus, HostLogger } from "../index.js";
import { resolveLastRoute, splitTarget } from "./last-route.js";
import type { OpenClawRuntime } from "./openclaw-api.js";

export async function deliver(
  runtime: OpenClawRuntime,
  openclawConfig: unknown,
  logger: HostLogger,
  bus: HookBus,
  delivery: DeliverySend,
): Promise<void> {
  const fields = { runId: delivery.runId, channel: delivery.channel, requestId: delivery.source.requestId };
  const { source, runId } = delivery;
  // The result goes to the plugin's journal too; a listener that throws must not turn a sent reply into a failure.
  const tell = (result: DeliveryResult) => {
    try {
      bus.emit("delivery:result", result);
    } catch (error) {
      logger.warn(`a delivery:result listener failed: ${(error as Error)?.message ?? String(error)}`, fields);
    }
  };
  const fail = (reason: string) => {
    logger.error(`delivery failed: ${reason}`, fields);
    tell({ source, runId, status: "failed", reason });
  };
  let target: { channel: string; to: string; accountId?: string; threadId?: string | number };
  const named = delivery.to === undefined ? undefined : splitTarget(undefined, delivery.to);
  if (delivery.channel === "last" && named?.channel !== undefined) {
    // `to` written as OpenClaw writes targets (`telegram:4242`) names its channel: no route needed.
    target = { channel: named.channel, to: named.to };
  } else if (delivery.channel === "last") {
    // The agent's main session keeps the route it last talked on; the caller named no channel, so that one is
    // used, with the caller's recipient when it named one (as `hooks serve` resolves `last`).
    const last = resolveLastRoute(runtime, delivery.agentId ?? "main");
    if (!last.ok) return fail(last.reason);
    target = delivery.to === undefined ? last.route : { channel: last.route.channel, to: delivery.to };
  } else {
    if (delivery.to === undefined) return fail(`channel "${delivery.channel}" needs "to" inside OpenClaw`);
    target = { channel: delivery.channel, to: delivery.to };
  }
  try {
    const adapter = await runtime.channel.outbound.loadAdapter(target.channel);
    if (!adapter?.sendText) return fail(`channel "${target.channel}" is not configured in OpenClaw`);
    const send: Parameters<typeof adapter.sendText>[0] = {
      cfg: openclawConfig,
      to: target.to,
      text: delivery.text,
    };
    if (target.accountId !== undefined) send.accountId = target.accountId;
    if (target.threadId !== undefined) send.threadId = target.threadId;
    await adapter.sendText(send);
    logger.info("reply delivered", { ...fields, channel: target.channel });
    tell({ source, runId, status: "sent" });
  } catch (error) {
    fail((error as Error)?.message ?? String(error));
  }
}
