/** @module Paths into the repository and its fixtures, for tests. */
import { readFileSync } from "node:fs";
import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const FIXTURES = path.join(REPO_ROOT, "fixtures");
export const TRANSFORMS_DIR = path.join(FIXTURES, "transforms");

export function readPayload(relative: string): any {
  return JSON.parse(readFileSync(path.join(FIXTURES, "payloads", relative), "utf8"));
}

/** The variables the bundled demo config reads: its token and the secrets of its six signed senders. */
export const DEMO_VARIABLES = [
  "HOOKS_TOKEN",
  "GITHUB_WEBHOOK_SECRET",
  "STRIPE_WEBHOOK_SECRET",
  "SLACK_SIGNING_SECRET",
  "STANDARD_WEBHOOK_SECRET",
  "TWILIO_AUTH_TOKEN",
  "META_APP_SECRET",
  "META_VERIFY_TOKEN",
] as const;
