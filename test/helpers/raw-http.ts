/** @module Raw HTTP, for requests fetch cannot make: huge declared lengths, trickled bodies, unescaped paths. */
import { request as httpRequest } from "node:http";
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  head: string;
  body: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** Writes `head` (and optional first body bytes), then resolves with the response the server sends. */
export function rawRequest(url: string, head: string, firstBytes = ""): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = "";
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      const end = data.indexOf("\r\n\r\n");
      if (end === -1) return;
      const headText = data.slice(0, end);
      const lengthMatch = /content-length:\s*(\d+)/i.exec(headText);
      const body = data.slice(end + 4);
      if (!closed && lengthMatch && Buffer.byteLength(body) < Number(lengthMatch[1])) return;
      settled = true;
      resolve({ status: Number(headText.split(" ")[1]), head: headText, body, closed });
      if (!closed) socket.once("close", () => undefined);
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      data += chunk;
      finish(false);
    });
    socket.on("close", () => {
      finish(true);
      if (!settled) reject(new Error(`connection closed without a response: ${JSON.stringify(data)}`));
    });
    socket.on("error", (error) => {
      if (!settled) reject(error);
    });
    socket.write(head + firstBytes);
  });
}

/** Resolves when the server closes the connection (after a response). */
export function headFor(path: string, headers: Record<string, string>): string {
  const lines = [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * A JSON POST with node:http, which leaves `<` and `>` in a path as they are (fetch would escape them): the answer's
 * status and X-Request-Id.
 */
export function postUnescaped(
  baseUrl: string,
  pathAndQuery: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; requestId: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: pathAndQuery,
        headers: { "content-type": "application/json", ...headers },
      },
      (response) => {
        response.resume();
        response.on("end", () =>
          resolve({ status: response.statusCode!, requestId: String(response.headers["x-request-id"]) }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
