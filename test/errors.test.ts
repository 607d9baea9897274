import { describe, expect, it } from "vitest";
import { ERROR_STATUS, HookError, isHookError, toHookError } from "../src/errors.js";

describe("error table", () => {
  it("maps every code to its status", () => {
    expect(ERROR_STATUS).toEqual({
      INVALID_JSON: 400,
      INVALID_PAYLOAD: 400,
      MODEL_NOT_ALLOWED: 400,
      SESSION_KEY_NOT_ALLOWED: 400,
      UNAUTHORIZED: 401,
      NOT_FOUND: 404,
      METHOD_NOT_ALLOWED: 405,
      BODY_TIMEOUT: 408,
      DUPLICATE_IN_PROGRESS: 409,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      AUTH_THROTTLED: 429,
      MAPPING_FAILED: 500,
      INTERNAL: 500,
      UNAVAILABLE: 503,
    });
  });

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
