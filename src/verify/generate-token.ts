/** @module A new random hook token: 32 random bytes, base64url (what `hooks token` prints). */
import { randomBytes } from "node:crypto";

export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}
