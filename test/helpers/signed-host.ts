/** @module Signed-sender tests' plumbing: a host with mappings and no throttling, raw sends, and one-byte changes. */
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createHooksPlugin } from "../../src/index.js";
import { REPO_ROOT } from "./repo.js";
import { startTestHost, type TestHost } from "./test-host.js";

export const SENDERS_TOKEN = "senders-test-token-0123456789abcdef";

export async function startSignedHost(
  mappings: MappingInput[],
  hooks: Record<string, unknown> = {},
): Promise<TestHost> {
  return startTestHost(
    createHooksPlugin(),
    {
      hooks: {
        enabled: true,
        token: SENDERS_TOKEN,
        transformsDir: "fixtures/transforms",
        // Property runs send many refused requests from one address; throttling is tested elsewhere.
        authFailures: { limit: 100_000, windowSeconds: 60 },
        mappings,
        ...hooks,
      },
    },
    { configDir: REPO_ROOT },
  );
}

export interface SentRaw {
  status: number;
  headers: Headers;
  text: string;
}

/** POSTs exact bytes to `<host>/hooks/<path>`. */
export async function sendRaw(
  host: TestHost,
  path: string,
  body: Buffer | string,
  headers: Record<string, string>,
): Promise<SentRaw> {
  const response = await fetch(`${host.url}/hooks/${path}`, { method: "POST", headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The same bytes with one byte changed. */
export function flipped(body: Buffer, at: number): Buffer {
  const copy = Buffer.from(body);
  const index = at % copy.length;
  copy[index] = copy[index]! ^ 0x20;
  return copy;
}

/** What the gateway log said about failed verifications. */
export function verificationLogs(host: TestHost): string[] {
  return host.logs.filter((line) => line.message.includes("verification failed")).map((line) => line.message);
}
