/** @module After the answer to a request refused before its body was read: the connection half-closes and drops what the client still sends for a moment, so the client reads the answer instead of a reset. */
import type { Socket } from "node:net";

/** How long a refused connection keeps reading after its answer: enough for a client to see it and stop. */
const LINGER_MS = 1_000;
/** The most it reads meanwhile, so a client that never stops costs a bounded amount of work. */
const LINGER_BYTES = 8 * 1024 * 1024;
/** How often the bytes read are looked at: node:http's parser reads them, without an event per chunk. */
const LINGER_CHECK_MS = 100;

/**
 * Call once the answer has been handed to the kernel (the response's `finish`). Closing a connection whose
 * unread body is still arriving makes the kernel reset it, and a client still sending then loses the answer it
 * was sent. The write side is shut instead (the client reads the answer, then the end) and node:http's parser
 * drops the body it refused, until the client ends its side, `LINGER_BYTES` have come, or `LINGER_MS` have passed.
 */
export function lingerAfterAnswer(socket: Socket): void {
  if (socket.destroyed) return;
  // node:http destroys a connection as soon as its last answer has left (`destroySoon`, on the write side's
  // `finish`): that close is the reset. The connection is cut below, on its own terms, instead.
  socket.removeListener("finish", socket.destroy);
  if (!socket.writableEnded) socket.end();
  const start = socket.bytesRead;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  const check = setInterval(() => {
    if (socket.bytesRead - start > LINGER_BYTES) cut();
  }, LINGER_CHECK_MS);
  timer.unref();
  check.unref();
  socket.once("end", cut);
  socket.once("close", () => {
    clearTimeout(timer);
    clearInterval(check);
  });
}
