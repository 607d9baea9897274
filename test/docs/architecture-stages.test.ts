/** @module docs/architecture.md lists the request's stages as the code has them, every optional stage on. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pipelineStages, type StageDeps } from "../../src/pipeline/stages.js";

/**
 * What makes every optional stage present: a capture, an allow-list, a rate limit of `/wake`, a body limit over
 * 1 MiB. Nothing is called.
 */
const everything = {
  largestBodyBytes: 32 * 1024 * 1024,
  capture: () => undefined,
  allowFor: () => undefined,
  directRateLimits: { wake: { requests: 1, perSeconds: 60, per: "client" }, agent: undefined },
} as unknown as StageDeps;

const bare = {
  largestBodyBytes: 256 * 1024,
  directRateLimits: { wake: undefined, agent: undefined },
} as unknown as StageDeps;

function documented(): string[] {
  const text = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
  const list = text.slice(text.indexOf("<!-- stages:"));
  const names: string[] = [];
  for (const line of list.split("\n").slice(1)) {
    const item = /^\d+\. \*(\w+)\*/.exec(line);
    if (item) names.push(item[1]!);
    else if (line.trim() === "") break;
  }
  return names;
}

describe("the stage list", () => {
  it("is the one docs/architecture.md shows, in its order", () => {
    expect(pipelineStages(everything).map((stage) => stage.name)).toEqual(documented());
  });

  it("leaves out what a config does not use: no allow-list, no rate limit of /wake or /agent, no capture, no body over 1 MiB", () => {
    const names = pipelineStages(bare).map((stage) => stage.name);
    expect(names).not.toContain("allowFrom");
    expect(names).not.toContain("limit");
    expect(names).not.toContain("capture");
    expect(names).not.toContain("yieldLarge");
    expect(names).toEqual(
      documented().filter(
        (name) =>
          ![
            "allowFrom",
            "captureUnclaimed",
            "limitBeforeBody",
            "capture",
            "limit",
            "yieldLarge",
            "decodeLarge",
          ].includes(name),
      ),
    );
  });
});
