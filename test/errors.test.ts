/** @module HookError beyond its status table (the endpoint tests observe each code's status over real HTTP): what an unexpected failure shows a caller, and telling the plugin's errors from others. */
import { describe, expect, it } from "vitest";
import { HookError, isHookError, toHookError } from "../src/errors.js";

describe("hook errors", () => {
  it("turns an unexpected failure into a bare INTERNAL: no message, cause or stack in the body", () => {
    const error = toHookError(new Error("db password is hunter2"));
    expect(error.status).toBe(500);
    const body = JSON.stringify(error);
    expect(JSON.parse(body)).toEqual({ ok: false, code: "INTERNAL", error: expect.any(String) });
    expect(body).not.toMatch(/hunter2|stack|at Object/);
  });

  it("recognises its errors by marker, not by class identity", () => {
    const native = new HookError("NOT_FOUND", "x");
    const lookalike = Object.assign(new Error("x"), {
      [Symbol.for("hooks-intake.hook-error")]: true,
      code: "NOT_FOUND",
    });
    expect(isHookError(native)).toBe(true);
    expect(isHookError(lookalike)).toBe(true);
    expect(isHookError(new Error("x"))).toBe(false);
  });
});
