/** @module `allowFrom` through the reference gateway over real HTTP on loopback: requests really come from 127.0.0.2 and 127.0.0.3 (Linux routes all of 127.0.0.0/8 to lo), a refusal arrives before the body and is journaled. */
import { request as httpRequest } from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { journalDirIn } from "../../src/config/resolve.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { AUTH, baseConfig } from "./support.js";

let handle: GatewayHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  await cleanupCli();
});

async function start(hooks: Record<string, unknown>): Promise<{ url: string; stateDir: string }> {
  const stateDir = path.join(makeTempDir("allow-from-"), "state");
  handle = await startGateway({
    config: baseConfig({}, hooks),
    stateDir,
    port: 0,
    logger: silentGatewayLogger,
  });
  return { url: handle.url, stateDir };
}

interface Sent {
  status: number;
  body: any;
  requestId: string;
  /** The answer came while the request's body was still short of its declared length. */
  beforeBody: boolean;
  connection: string | undefined;
}

/**
 * A JSON POST from the local address `from`. With `declaredLength` the head promises more bytes than are sent and the
 * request is never ended: an answer can then only come from a server that did not wait for the body.
 */
function post(
  url: string,
  hook: string,
  options: { from: string; body?: string; headers?: Record<string, string>; declaredLength?: number },
): Promise<Sent> {
  const target = new URL(url);
  const body = options.body ?? JSON.stringify({ text: "hello", n: 1 });
  const partial = options.declaredLength !== undefined;
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: "POST",
        path: `/hooks/${hook}`,
        localAddress: options.from,
        agent: false,
        headers: {
          ...AUTH,
          "content-type": "application/json",
          "content-length": String(options.declaredLength ?? Buffer.byteLength(body)),
          ...options.headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => {
          resolve({
            status: response.statusCode!,
            body: text ? JSON.parse(text) : undefined,
            requestId: String(response.headers["x-request-id"]),
            beforeBody: partial,
            connection: response.headers.connection,
          });
          outgoing.destroy();
        });
      },
    );
    // After the answer, a server that closes a half-sent request's connection is expected: only earlier errors count.
    outgoing.on("error", reject);
    outgoing.write(body);
    if (!partial) outgoing.end();
  });
}

/** The journal's listing of refused requests, as `hooks journal list --status 4xx --json` prints it. */
async function refusals(stateDir: string): Promise<Array<Record<string, any>>> {
  const listed = await runCli([
    "journal",
    "list",
    "--dir",
    journalDirIn(stateDir),
    "--status",
    "4xx",
    "--json",
  ]);
  expect(listed.code).toBe(0);
  return listed.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

const ciMapping = (allowFrom: readonly string[]) => ({
  id: "ci",
  match: { path: "ci" },
  action: "wake",
  textTemplate: "ci {{n}}",
  allowFrom,
});

describe("allowFrom in the reference gateway", () => {
  it("a mapping's list admits its address and refuses another with 403 before reading the body, journaled", async () => {
    const { url, stateDir } = await start({ mappings: [ciMapping(["127.0.0.2"])] });

    const accepted = await post(url, "ci", { from: "127.0.0.2" });
    expect(accepted).toMatchObject({ status: 200, body: { ok: true, mappingId: "ci" } });

    // A million bytes promised, a few sent, the request never ended: the 403 comes all the same.
    const refused = await post(url, "ci", { from: "127.0.0.3", declaredLength: 1_000_000 });
    expect(refused).toMatchObject({
      status: 403,
      beforeBody: true,
      // The unread body is not drained: the connection ends with the answer.
      connection: "close",
      body: {
        ok: false,
        code: "SOURCE_NOT_ALLOWED",
        error: "This hook does not accept requests from this address.",
      },
    });
    // Refused before its credential is judged: a wrong token from there gets the same 403, not 401.
    const stranger = await post(url, "ci", { from: "127.0.0.3", headers: { authorization: "Bearer wrong" } });
    expect(stranger.status).toBe(403);

    await handle!.close();
    handle = undefined;
    const listed = await refusals(stateDir);
    expect(listed.find((entry) => entry.requestId === refused.requestId)).toMatchObject({
      status: 403,
      state: "refused",
      code: "SOURCE_NOT_ALLOWED",
      reason: "SOURCE_NOT_ALLOWED",
      hook: "ci",
      client: "127.0.0.3",
    });
    expect(listed.every((entry) => entry.client === "127.0.0.3")).toBe(true);
  });

  it("hooks.limits.default.allowFrom guards /wake", async () => {
    const { url } = await start({ limits: { default: { allowFrom: ["127.0.0.2"] } } });
    expect((await post(url, "wake", { from: "127.0.0.2" })).status).toBe(200);
    expect(await post(url, "wake", { from: "127.0.0.3" })).toMatchObject({
      status: 403,
      body: { code: "SOURCE_NOT_ALLOWED" },
    });
  });

  it("behind hooks.trustedProxies the X-Forwarded-For address is the one judged", async () => {
    const { url, stateDir } = await start({
      trustedProxies: ["127.0.0.1"],
      mappings: [ciMapping(["203.0.113.0/24"])],
    });
    const via = (forwarded: string, from = "127.0.0.1") =>
      post(url, "ci", { from, headers: { "x-forwarded-for": forwarded } });

    expect((await via("203.0.113.5")).status).toBe(200);
    const refused = await via("198.51.100.7");
    expect(refused).toMatchObject({ status: 403, body: { code: "SOURCE_NOT_ALLOWED" } });
    // The proxy's own address is not on the list: a request straight from it is refused.
    expect((await post(url, "ci", { from: "127.0.0.1" })).status).toBe(403);
    // 127.0.0.2 is no trusted proxy: what it says it forwards is not believed, its own address is judged.
    expect((await via("203.0.113.5", "127.0.0.2")).status).toBe(403);

    await handle!.close();
    handle = undefined;
    const listed = await refusals(stateDir);
    expect(listed.find((entry) => entry.requestId === refused.requestId)).toMatchObject({
      code: "SOURCE_NOT_ALLOWED",
      client: "198.51.100.7",
    });
  });
});
