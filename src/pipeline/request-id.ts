/** @module The request id: the caller's X-Request-Id when it is sane, else a fresh one from the id source. */
import type { Ids } from "../ids.js";

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(header: string | string[] | undefined, ids: Ids): string {
  return typeof header === "string" && SANE_ID.test(header) ? header : ids.uuid();
}
