/** @module Sends delivered replies through OpenClaw's channel outbound adapters; a channel it cannot reach is a logged failure. */
import type { DeliveryResult, DeliverySend, HookBus, HostLogger } from "../index.js";
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
  if (delivery.channel === "last") {
    // OpenClaw keeps the main session's last route in its session store; reading it from a plugin is not done yet.
    return fail(
      'channel "last" is not resolved inside OpenClaw: name the channel and "to" in the request or mapping',
    );
  }
  if (delivery.to === undefined) return fail(`channel "${delivery.channel}" needs "to" inside OpenClaw`);
  try {
    const adapter = await runtime.channel.outbound.loadAdapter(delivery.channel);
    if (!adapter?.sendText) return fail(`channel "${delivery.channel}" is not configured in OpenClaw`);
    await adapter.sendText({ cfg: openclawConfig, to: delivery.to, text: delivery.text });
    logger.info("reply delivered", fields);
    tell({ source, runId, status: "sent" });
  } catch (error) {
    fail((error as Error)?.message ?? String(error));
  }
}
