/** @module The node:http adapter of the pipeline: the route handler a host registers for `hooks.path`. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { RouteHandler } from "../host/contract.js";
import type { HangUp, PipelineResponse } from "../pipeline/request.js";
import type { Pipeline } from "../pipeline/run-pipeline.js";
import { lingerAfterAnswer } from "./refused-linger.js";

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/**
 * Writes the answer; resolves once the response has ended or the connection is gone. The socket is watched as
 * well as the response: a pipelined response queued behind another is not attached to the socket yet, and when
 * the client leaves it never closes.
 */
function writeResponse(req: IncomingMessage, res: ServerResponse, response: PipelineResponse): Promise<void> {
  return new Promise((resolve) => {
    const socket = req.socket;
    if (res.destroyed || socket.destroyed) return resolve();
    const done = () => {
      res.off("close", done);
      socket.off("close", done);
      resolve();
    };
    res.once("close", done);
    socket.once("close", done);
    const headers = response.headers;
    // A body the pipeline refused to read is not drained: the connection closes after the answer instead, once the
    // client has had a moment to read it.
    if (!req.complete && hasBody(req)) {
      res.shouldKeepAlive = false;
      headers.Connection = "close";
      res.once("finish", () => lingerAfterAnswer(req.socket));
    }
    res.writeHead(response.status, headers);
    res.end(response.body);
  });
}

/**
 * The caller's connection as the pipeline sees it. Listeners are attached only when a stage watches (a caller
 * waiting for its turn): an AbortController per request, aborted by every normal close, cost more than the rest of
 * the adapter (bench/PROFILE.md). The socket is watched as well as the response: a pipelined response queued
 * behind another never closes.
 */
class ConnectionHangUp implements HangUp {
  constructor(
    private readonly res: ServerResponse,
    private readonly socket: Socket,
  ) {}

  get happened(): boolean {
    return this.socket.destroyed || (this.res.destroyed && !this.res.writableFinished);
  }

  watch(listener: () => void): () => void {
    const { res, socket } = this;
    const closed = () => {
      unwatch();
      if (!res.writableFinished) listener();
    };
    const unwatch = () => {
      res.off("close", closed);
      socket.off("close", closed);
    };
    res.once("close", closed);
    socket.once("close", closed);
    return unwatch;
  }
}

/**
 * The handler resolves once the response has ended and the request's events are emitted, so a host that runs
 * handlers inside a per-request scope covers all of the request's work. It answers every request under the
 * route's path itself and says so (`true`); a path outside `hooks.path` is left to the host (`false`). `serving`
 * holds the pipeline of the config in force.
 */
export function createHooksHandler(serving: { readonly pipeline: Pipeline }): RouteHandler {
  return async (req, res) => {
    // Read once per request: a reload that swaps the pipeline leaves a request under way on its own.
    const { pipeline } = serving;
    const socket = req.socket;
    const exchange = await pipeline(
      {
        method: req.method ?? "",
        url: req.url ?? "/",
        headers: req.headers,
        remoteAddress: socket.remoteAddress,
        body: req,
        hungUp: new ConnectionHangUp(res, socket),
      },
      { respond: (response) => writeResponse(req, res, response) },
    );
    return exchange.claimed;
  };
}
