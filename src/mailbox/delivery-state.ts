/** @module The helper's delivery state: last delivered UID and UIDVALIDITY, read and written atomically. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as v from "valibot";
import { writeFileAtomically } from "./atomic-write.js";

const Uid = v.pipe(v.number(), v.integer(), v.minValue(0));

export const DeliveryStateSchema = v.object({
  version: v.literal(1),
  /** Which mailbox the UIDs belong to (`user@host:port/mailbox`); another mailbox means a fresh start. */
  account: v.string(),
  uidValidity: v.pipe(Uid, v.minValue(1)),
  /** Every message with a UID up to and including this one was answered 2xx by the hook (or predates the start). */
  lastUid: Uid,
  updatedAt: v.string(),
});
export type DeliveryState = v.InferOutput<typeof DeliveryStateSchema>;

export interface DeliveryStateStore {
  readonly file: string;
  /** `undefined` when there is no state yet; throws when the file exists but cannot be trusted. */
  load(): Promise<DeliveryState | undefined>;
  save(state: Omit<DeliveryState, "version" | "updatedAt">): Promise<DeliveryState>;
}

export const STATE_FILE_NAME = "mailbox.json";

export function createDeliveryStateStore(stateDir: string): DeliveryStateStore {
  const file = path.resolve(stateDir, STATE_FILE_NAME);
  return {
    file,
    async load() {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
      // A damaged file must stop the helper: guessing a position would either flood old mail or skip new mail.
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new Error(`state file ${file} is not valid JSON (${(error as Error).message}); ${REMEDY}`);
      }
      const result = v.safeParse(DeliveryStateSchema, parsed);
      if (!result.success)
        throw new Error(
          `state file ${file} is not a mailbox state: ${v.summarize(result.issues)}; ${REMEDY}`,
        );
      return result.output;
    },
    async save(fields) {
      const state: DeliveryState = { version: 1, ...fields, updatedAt: new Date().toISOString() };
      await writeFileAtomically(file, `${JSON.stringify(state, null, 2)}\n`);
      return state;
    },
  };
}

const REMEDY = "move it away to start again from the mailbox's current end";
