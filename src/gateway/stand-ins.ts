/** @module Random stand-ins for environment variables a config names but nobody set: replays and the bundled demo run without real secrets. */
import { randomBytes } from "node:crypto";

/**
 * An environment where every variable that is not set reads as a random stand-in, named in `standIns`. Hex
 * digits, so a stand-in is a valid key of every signature scheme (Standard Webhooks reads it as base64).
 */
export function withStandIns(env: NodeJS.ProcessEnv, standIns: string[]): NodeJS.ProcessEnv {
  const invented = new Map<string, string>();
  return new Proxy(env, {
    get(target, name) {
      if (typeof name !== "string" || target[name] !== undefined) return target[name as string];
      let value = invented.get(name);
      if (value === undefined) {
        value = randomBytes(24).toString("hex");
        invented.set(name, value);
        standIns.push(name);
      }
      return value;
    },
  });
}
