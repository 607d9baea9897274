/** @module The inspector handler's HTTP plumbing: answers with their length, JSON and JSON errors, and reading a small posted JSON body. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** A login body is a key: anything longer is not one. */
const MAX_BODY_BYTES = 4096;

export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(extra)) res.setHeader(name, value);
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  extra?: Record<string, string>,
): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), extra);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra?: Record<string, string>,
): void {
  sendJson(res, status, { error: { code, message } }, extra);
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? {} : JSON.parse(text);
}

/** POSTs must say JSON: a form or a plain-text post from another site cannot, so SameSite is not the only guard. */
export function isJson(req: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
}
