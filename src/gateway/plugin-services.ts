/** @module The plugin's services on the reference gateway: registered at start, started in order, drained and stopped newest first. */
import type { HostService } from "../index.js";
import type { GatewayLogger } from "./logger.js";

export class PluginServices {
  private readonly registered: HostService[] = [];
  private readonly started: HostService[] = [];

  constructor(private readonly logger: GatewayLogger) {}

  register(service: HostService): void {
    this.registered.push(service);
  }

  /** Starts the registered services one after the other; those started before one that fails are still stopped. */
  async start(): Promise<void> {
    for (const service of this.registered) {
      await service.start();
      this.started.push(service);
    }
  }

  /** Tells every service that a stop has begun: no new work from here. */
  drain(): void {
    for (const service of this.registered) service.drain?.();
  }

  /** Stops the started services, newest first; one that fails to stop is logged, and the others still stop. */
  async stop(): Promise<void> {
    for (const service of [...this.started].reverse()) {
      try {
        await service.stop();
      } catch (error) {
        this.logger.error(`service ${service.id} failed to stop: ${(error as Error).message}`);
      }
    }
  }
}
