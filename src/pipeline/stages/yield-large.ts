/** @module Pauses between stages for a large body, and its decoding as a step of its own: other requests are served between its read, decode, parse, resolution and record. */
import type { Stage } from "../stage.js";

/**
 * Above this many bytes a body's next stage waits for the next turn of the event loop. Below it nothing is
 * awaited: a plain small request runs its stages in one go, as before.
 */
export const YIELD_ABOVE_BYTES = 1024 * 1024;

/**
 * A body of 30 MB costs hundreds of milliseconds in each of its read, parse and journal stages; run back to back they
 * held the event loop over a second while every other request waited (bench/PROFILE.md, "Hostile load"). The total
 * work is the same; the longest stretch nobody else is served is one stage's.
 */
export const yieldLarge: Stage = (ctx) => {
  if (ctx.raw === undefined || ctx.raw.length <= YIELD_ABOVE_BYTES) return ctx;
  return new Promise((resolve) => setImmediate(() => resolve(ctx)));
};

/**
 * A large body's text, decoded in a turn of its own before the parse stage reads it (30 MB: about as long as the
 * parse itself). A smaller body is decoded by the parse stage, as before.
 */
export const decodeLarge: Stage = (ctx) => {
  if (ctx.raw === undefined || ctx.raw.length <= YIELD_ABOVE_BYTES) return ctx;
  return { ...ctx, text: ctx.raw.toString("utf8") };
};
