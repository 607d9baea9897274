/** @module The inspector's dry-run pipeline: one per config, its transforms kept loaded across dry runs until a reload. */
import type { PreparedHooks } from "../prepare-hooks.js";
import { ReplayPipeline } from "../replay/replay-fixture.js";

export class DryRunPipelines {
  private current: { prepared: PreparedHooks; pipeline: ReplayPipeline } | undefined;

  /** One dry-run pipeline per config: its transforms stay loaded across dry runs until a reload. */
  for(prepared: PreparedHooks): ReplayPipeline {
    if (this.current?.prepared !== prepared) {
      void this.current?.pipeline.close().catch(() => undefined);
      this.current = { prepared, pipeline: new ReplayPipeline(prepared) };
    }
    return this.current.pipeline;
  }

  /** Stops the pipeline's transform workers. */
  async close(): Promise<void> {
    const closing = this.current?.pipeline.close();
    this.current = undefined;
    await closing;
  }
}
