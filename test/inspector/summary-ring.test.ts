/** @module The inspector's ring: bounded, newest first, found by either name, seeded without duplicates. */
import { describe, expect, it } from "vitest";
import type { InspectorSummary } from "../../src/inspector/inspector-source.js";
import { SummaryRing } from "../../src/inspector/summary-ring.js";

const row = (n: number, requestId = `r${n}`): InspectorSummary => ({
  id: `k${n}`,
  requestId,
  at: n,
  hook: "wake",
  status: 200,
  state: "done",
});

function ids(ring: SummaryRing): string[] {
  const out: string[] = [];
  ring.each((summary) => {
    out.push(summary.id);
    return true;
  });
  return out;
}

describe("SummaryRing", () => {
  it("keeps the newest `size` rows, newest first, and forgets the dropped ones by both names", () => {
    const ring = new SummaryRing(3);
    for (let n = 1; n <= 5; n++) ring.push(row(n));
    expect(ids(ring)).toEqual(["k5", "k4", "k3"]);
    expect(ring.full).toBe(true);
    expect(ring.byKey("k2")).toBeUndefined();
    expect(ring.byRequest("r1")).toBeUndefined();
    expect(ring.byKey("k4")?.requestId).toBe("r4");
  });

  it("finds the newest row of an X-Request-Id sent twice, and keeps it when the older one is dropped", () => {
    const ring = new SummaryRing(2);
    ring.push(row(1, "same"));
    ring.push(row(2, "same"));
    expect(ring.byRequest("same")?.id).toBe("k2");
    ring.push(row(3));
    expect(ring.byRequest("same")?.id).toBe("k2");
  });

  it("puts seeded rows before the live ones, skipping those it has, within its size", () => {
    const ring = new SummaryRing(4);
    ring.push(row(8));
    ring.push(row(9));
    ring.seed([row(5), row(6), row(7), row(8)]);
    expect(ids(ring)).toEqual(["k9", "k8", "k7", "k6"]);
    expect(ring.byKey("k5")).toBeUndefined();
  });
});
