/** @module The helpers every scheme shares: equality that never throws, the timestamp window's wording, header reading. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyString, equalBytes, headerValue, timestampProblem } from "../../src/verify/schemes/compare.js";

describe("equalBytes", () => {
  it("answers false for unequal lengths instead of throwing, and compares equal lengths", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(equalBytes(a, b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(equalBytes(a, Uint8Array.from(a))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("compares strings as their UTF-8 bytes", () => {
    expect(equalBytes("é", Buffer.from([0xc3, 0xa9]))).toBe(true);
    expect(equalBytes("sha256=ab", "sha256=ab")).toBe(true);
    expect(equalBytes("sha256=ab", "sha256=a")).toBe(false);
  });
});

describe("timestampProblem", () => {
  it("says how late or how early, in the stable wording", () => {
    expect(timestampProblem("1000", 1600, 300)).toBe("timestamp is 600 s old; tolerance 300 s");
    expect(timestampProblem("1030", 1000, 20)).toBe("timestamp is 30 s in the future; tolerance 20 s");
    expect(timestampProblem("1300", 1000, 300)).toBeUndefined();
    expect(timestampProblem("700", 1000, 300)).toBeUndefined();
  });

  it("calls anything but plain unix seconds malformed", () => {
    for (const raw of ["", "-5", "1.5", "1e3", " 1000", "0x10", "１０００", "1".repeat(16)]) {
      expect(timestampProblem(raw, 1000, 300), raw).toBe("timestamp header malformed");
    }
  });

  it("accepts exactly the window, both ways", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2e9 }),
        fc.integer({ min: 0, max: 2e9 }),
        fc.nat(5000),
        (t, now, tol) => {
          const problem = timestampProblem(String(t), now, tol);
          expect(problem === undefined).toBe(Math.abs(now - t) <= tol);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("headerValue", () => {
  it("takes the first of repeated headers and treats an empty value as none", () => {
    expect(headerValue({ "x-a": ["one", "two"] }, "x-a")).toBe("one");
    expect(headerValue({ "x-a": "one" }, "x-a")).toBe("one");
    expect(headerValue({ "x-a": "" }, "x-a")).toBeUndefined();
    expect(headerValue({ "x-a": [] }, "x-a")).toBeUndefined();
    expect(headerValue({}, "x-a")).toBeUndefined();
  });
});

describe("bodyString", () => {
  it("reads an own top-level string field only", () => {
    expect(bodyString({ id: "evt_1" }, "id")).toBe("evt_1");
    expect(bodyString({ id: "" }, "id")).toBeUndefined();
    expect(bodyString({ id: 1 }, "id")).toBeUndefined();
    expect(bodyString(Object.create({ id: "inherited" }), "id")).toBeUndefined();
    expect(bodyString("id", "id")).toBeUndefined();
    expect(bodyString(null, "id")).toBeUndefined();
  });
});
