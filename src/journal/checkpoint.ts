/** @module The journal's checkpoint: what a start needs from the segments before a point (unfinished records, delivery ids, segment facts), so it reads only what came after; its shape, reading and writing. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as v from "valibot";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { expandLine } from "./compact-line.js";
import { replaceFile } from "./durable-fs.js";
import { AdmittedLineSchema, JournalResponseSchema } from "./records.js";

const CHECKPOINT_FILE = "checkpoint.json";

const SegmentFactsSchema = v.object({
  seq: v.number(),
  /** Time of its newest line: it expires a retention period after it. */
  newestAt: v.number(),
  holdsDeliveries: v.boolean(),
  /** Its finished records were rewritten small (see compact-segment). */
  compacted: v.optional(v.boolean()),
});

const StoredEventSchema = v.object({ eventId: v.string(), sessionKey: v.string(), at: v.number() });

const CheckpointSchema = v.object({
  v: v.literal(1),
  /** Every line before `offset` of segment `seq`, and every line of the segments before it, is summed up here. */
  seq: v.number(),
  offset: v.number(),
  segments: v.array(SegmentFactsSchema),
  /** Records not finished at that point, without their stored request (which a recovery never needs). */
  unfinished: v.array(
    v.object({
      seq: v.number(),
      handed: v.boolean(),
      handedRuns: v.optional(v.array(v.string())),
      record: v.omit(AdmittedLineSchema, ["t", "handed", "handedRuns"]),
    }),
  ),
  /** Delivery ids within their window, newest last. */
  deliveries: v.array(v.object({ key: v.string(), response: JournalResponseSchema, at: v.number() })),
  /** The system events of the newest finished records, one array per record, newest last. */
  stored: v.array(v.array(StoredEventSchema)),
});

export type Checkpoint = v.InferOutput<typeof CheckpointSchema>;

/** The directory's checkpoint, or undefined when there is none or it does not parse (then the start reads everything). */
export async function readCheckpoint(dir: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, CHECKPOINT_FILE), "utf8");
  } catch {
    return undefined;
  }
  try {
    const json = JSON.parse(text) as { unfinished?: unknown } | null;
    // An unfinished record is kept as its journal line keeps it (a large payload once, see compact-line): its
    // events are put back whole before the check, as a segment's reader does.
    if (Array.isArray(json?.unfinished)) {
      for (const entry of json.unfinished) expandLine((entry as { record?: unknown } | null)?.record);
    }
    const parsed = v.safeParse(CheckpointSchema, json);
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Delivery ids per piece of a checkpoint's text. 100,000 ids make about 24 MB, whose encoding in one piece held
 * the event loop for about 75 ms; each piece is encoded and written in a turn of its own (bench/PROFILE.md).
 */
const DELIVERIES_PER_WRITE = 5_000;

/** Replaces the checkpoint atomically (see replaceFile): a crash leaves the old checkpoint or the new one. */
function writeCheckpoint(dir: string, checkpoint: Checkpoint): Promise<void> {
  const { deliveries, ...rest } = checkpoint;
  return replaceFile(path.join(dir, CHECKPOINT_FILE), async (handle) => {
    // The object without its ids, its closing brace replaced by the list of ids, which follows piece by piece.
    await handle.writeFile(`${JSON.stringify(rest).slice(0, -1)},"deliveries":[`);
    for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_WRITE) {
      const piece = JSON.stringify(deliveries.slice(start, start + DELIVERIES_PER_WRITE)).slice(1, -1);
      await handle.writeFile(start === 0 ? piece : `,${piece}`);
    }
    await handle.writeFile("]}");
  });
}

/**
 * Writes checkpoints in the background, one after the other. A failure (a full disk) keeps the previous one, which
 * is still true, only older; it is reported once until a write succeeds again.
 */
export class CheckpointWriter {
  /** The segment the newest written checkpoint points into: segments before it may be rewritten, it may not. */
  writtenSeq = 0;
  private writing: Promise<void> = Promise.resolve();
  private failing = false;
  /** Where the last checkpoint was taken (segment, offset, unfinished count). */
  private point: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly logger: HostLogger,
  ) {}

  /** Queues a checkpoint taken now by `take`, unless nothing moved since the last one (an idle journal's timer). */
  write(point: string, take: () => Checkpoint): void {
    if (point === this.point) return;
    this.point = point;
    const checkpoint = take();
    this.writing = this.writing.then(async () => {
      try {
        await writeCheckpoint(this.dir, checkpoint);
        this.writtenSeq = checkpoint.seq;
        this.failing = false;
      } catch (error) {
        // Tried again at the next occasion even if nothing moves.
        this.point = undefined;
        if (this.failing) return;
        this.failing = true;
        this.logger.warn(
          `journal: could not write its checkpoint (the next start reads more): ${errorMessage(error)}`,
        );
      }
    });
  }

  /** Resolves once every queued checkpoint is written (or has failed). */
  settled(): Promise<void> {
    return this.writing;
  }

  /** The next checkpoint is written even at the same point (a new run of the journal). */
  forget(): void {
    this.point = undefined;
  }
}
