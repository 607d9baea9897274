import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compileTemplate,
  stringifyValue,
  type TemplateContext,
  TemplateSyntaxError,
} from "../../src/mapping/template.js";

const ctx = (payload: unknown, extra: Partial<TemplateContext> = {}): TemplateContext => ({
  payload,
  headers: {
    "x-github-event": "push",
    "x-multi": ["a", "b"] as unknown as string,
    authorization: "Bearer secret",
  },
  query: { page: "2", token: "secret" },
  path: "github/push",
  now: "2026-11-21T00:00:00.000Z",
  ...extra,
});

const render = (source: string, payload: unknown = {}) => compileTemplate(source).render(ctx(payload));

const identifier = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
  .filter(
    (s) =>
      !["payload", "headers", "query", "path", "now", "__proto__", "prototype", "constructor"].includes(s),
  );

describe("templates", () => {
  it.each([
    ["{{ payload.repo.name }}", { repo: { name: "hooks" } }, "hooks"],
    ["{{repo.name}}", { repo: { name: "hooks" } }, "hooks"],
    ["{{ commits[1].id }}", { commits: [{ id: "a" }, { id: "b" }] }, "b"],
    ["{{ a['odd key'] }}", { a: { "odd key": "x" } }, "x"],
    ["{{ missing.deep }}", {}, ""],
    ["{{ nothing }}", { nothing: null }, ""],
    ["{{ n }} {{ t }} {{ f }}", { n: 4.5, t: true, f: false }, "4.5 true false"],
    ["{{ obj }}", { obj: { a: [1, "x"] } }, '{"a":[1,"x"]}'],
    ["{{ list }}", { list: [1, 2] }, "[1,2]"],
    ["{{ headers.X-GitHub-Event }}", {}, "push"],
    ["{{ headers.x-multi }}", {}, "a, b"],
    ["{{ query.page }}", {}, "2"],
    ["{{ path }} at {{ now }}", {}, "github/push at 2026-11-21T00:00:00.000Z"],
    ["{{ __proto__ }}{{ a.constructor }}{{ a.prototype }}{{ constructor.name }}", { a: {} }, ""],
    ["{{ headers.authorization }}{{ query.token }}{{ headers }}{{ query }}", {}, ""],
    ["no expressions at all", {}, "no expressions at all"],
    ["a }} b", {}, "a }} b"],
    ["{{ str.length }}", { str: "abc" }, ""],
  ])("%s → %j", (source, payload, expected) => {
    expect(render(source, payload)).toBe(expected);
  });

  it.each([
    "{{",
    "x {{ a",
    "{{ }}",
    "{{ a..b }}",
    "{{ a[x] }}",
    "{{ .a }}",
    "{{ a. }}",
    "{{ path.x }}",
    "{{ now.y }}",
    "{{ a b }}",
  ])("refuses %j at compile time", (source) => {
    expect(() => compileTemplate(source)).toThrow(TemplateSyntaxError);
  });

  it("renders any text without {{ unchanged", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        fc.pre(!text.includes("{{"));
        expect(render(text)).toBe(text);
      }),
    );
  });

  it("renders a generated path to the value found there", () => {
    const segment = fc.oneof(identifier, fc.nat({ max: 3 }));
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.jsonValue(), (segments, leaf) => {
        fc.pre(typeof segments[0] === "string");
        // Build a payload that has `leaf` at exactly that path.
        let value: unknown = leaf;
        for (let i = segments.length - 1; i >= 0; i--) {
          const s = segments[i]!;
          if (typeof s === "number") {
            const arr: unknown[] = Array.from({ length: s + 1 }, () => null);
            arr[s] = value;
            value = arr;
          } else value = { [s]: value };
        }
        const expr = segments
          .map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`))
          .join("");
        expect(render(`<{{ ${expr} }}>`, value)).toBe(`<${stringifyValue(leaf)}>`);
        expect(render(`{{payload.${expr}}}`, value)).toBe(stringifyValue(leaf));
      }),
      { numRuns: 300 },
    );
  });

  it("never throws at render time and never reads the prototype chain", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            identifier,
            fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty"),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        fc.jsonValue(),
        (segments, payload) => {
          const template = compileTemplate(`{{ ${segments.join(".")} }}`);
          const out = template.render(ctx(payload));
          expect(typeof out).toBe("string");
          expect(out).not.toMatch(/function|native code/);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("parses once: rendering does not depend on the source any more", () => {
    const template = compileTemplate("{{ a }}-{{ b }}");
    expect(template.dynamic).toBe(true);
    expect(template.render(ctx({ a: 1, b: 2 }))).toBe("1-2");
    expect(compileTemplate("static").dynamic).toBe(false);
  });
});
