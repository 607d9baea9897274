/** @module The allow-from stage judges the address admit found, never a header: an address on the hook's list passes unchanged, any other is 403 whatever it forwards. */
import { describe, expect, it } from "vitest";
import { createAllowLists } from "../../../src/pipeline/allow-lists.js";
import { createAllowFromStage } from "../../../src/pipeline/stages/allow-from.js";
import { admittedContext, prepare, refusalOf, runStage } from "./context.js";

const allowLists = createAllowLists(
  prepare({
    limits: { wake: { allowFrom: ["192.0.2.0/24"] } },
    mappings: [
      { id: "ops", match: { path: "ops" }, action: "wake", textTemplate: "x", allowFrom: ["loopback"] },
    ],
  }),
);
if (allowLists === undefined) throw new Error("the config limits sources: there is an allow-list");
const allowFrom = createAllowFromStage(allowLists);

describe("the allow-from stage", () => {
  it("passes the very context on when its address is on the hook's list", async () => {
    const ctx = admittedContext({ url: "/hooks/wake", address: "192.0.2.200", client: "192.0.2.200" });
    expect(await runStage(allowFrom, ctx)).toBe(ctx);
    const local = admittedContext({ url: "/hooks/ops", address: "127.0.0.1", client: "127.0.0.1" });
    expect(await runStage(allowFrom, local)).toBe(local);
  });

  it("refuses an address off the list 403, whatever X-Forwarded-For names: only admit's address counts", async () => {
    const ctx = admittedContext({
      url: "/hooks/wake",
      address: "198.51.100.4",
      client: "198.51.100.4",
      headers: { "x-forwarded-for": "192.0.2.1" },
    });
    const refused = await refusalOf(allowFrom, ctx);
    expect([refused.code, refused.status]).toEqual(["SOURCE_NOT_ALLOWED", 403]);
  });

  it("keeps each hook to its own list", async () => {
    const ctx = admittedContext({ url: "/hooks/ops", address: "192.0.2.200", client: "192.0.2.200" });
    expect((await refusalOf(allowFrom, ctx)).code).toBe("SOURCE_NOT_ALLOWED");
    const agent = admittedContext({ url: "/hooks/agent", address: "198.51.100.4", client: "198.51.100.4" });
    expect(await runStage(allowFrom, agent)).toBe(agent);
  });
});
