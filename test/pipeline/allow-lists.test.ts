/** @module `allowFrom`: which list guards each hook name (own, default, the union over a name's candidate mappings), what proxy-addr matches, and the config errors with their paths. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLED_RANGES_FILE, parseRangesFile } from "../../src/config/address-ranges.js";
import { formatIssue } from "../../src/config/issues.js";
import { createAllowLists } from "../../src/pipeline/allow-lists.js";
import { type PreparedHooks, prepareHooks } from "../../src/prepare-hooks.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";

const TOKEN = "allow-lists-test-token-0123456789abcdef";

afterEach(cleanupCli);

function prepare(hooks: Record<string, unknown>, configDir = "/etc/gateway"): PreparedHooks {
  const result = prepareHooks({ hooks: { enabled: true, token: TOKEN, ...hooks } }, { configDir });
  expect(result.issues).toEqual([]);
  return result.prepared!;
}

function problems(hooks: Record<string, unknown>, configDir = "/etc/gateway"): string[] {
  return prepareHooks({ hooks: { enabled: true, token: TOKEN, ...hooks } }, { configDir }).issues.map(
    formatIssue,
  );
}

/** Which of `addresses` may reach `hook`; "any" when no list guards it. */
function allowed(prepared: PreparedHooks, hook: string, addresses: readonly string[]): string[] | "any" {
  const check = createAllowLists(prepared)?.(hook);
  return check === undefined ? "any" : addresses.filter((address) => check(address));
}

const wake = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  match: { path: id },
  action: "wake",
  textTemplate: id,
  ...extra,
});

describe("matching an address", () => {
  it("takes single addresses and CIDR ranges, IPv4 and IPv6", () => {
    const prepared = prepare({
      mappings: [wake("ci", { allowFrom: ["192.0.2.7", "198.51.100.0/24", "2001:db8::/32", "fd00::1"] })],
    });
    expect(
      allowed(prepared, "ci", [
        "192.0.2.7",
        "192.0.2.8",
        "198.51.100.200",
        "198.51.101.1",
        "2001:db8:1:2::3",
        "2001:db9::1",
        "fd00::1",
        "fd00::2",
      ]),
    ).toEqual(["192.0.2.7", "198.51.100.200", "2001:db8:1:2::3", "fd00::1"]);
  });

  it("judges an IPv4-mapped IPv6 address (a dual-stack socket's) as its IPv4 address", () => {
    const prepared = prepare({ mappings: [wake("ci", { allowFrom: ["192.0.2.0/24"] })] });
    expect(allowed(prepared, "ci", ["::ffff:192.0.2.9", "::ffff:198.51.100.1"])).toEqual([
      "::ffff:192.0.2.9",
    ]);
  });

  it("refuses what is not an address at all: nothing proves it is on the list", () => {
    const prepared = prepare({ mappings: [wake("ci", { allowFrom: ["loopback"] })] });
    expect(allowed(prepared, "ci", ["unknown", "", "127.0.0.1"])).toEqual(["127.0.0.1"]);
  });

  it("expands proxy-addr's names and the bundled `github`", () => {
    const prepared = prepare({
      mappings: [
        wake("local", { allowFrom: ["loopback", "uniquelocal", "linklocal"] }),
        wake("github", { allowFrom: ["github"] }),
      ],
    });
    expect(
      allowed(prepared, "local", ["127.0.0.5", "::1", "10.1.2.3", "fe80::1", "169.254.1.1", "8.8.8.8"]),
    ).toEqual(["127.0.0.5", "::1", "10.1.2.3", "fe80::1", "169.254.1.1"]);
    expect(
      allowed(prepared, "github", [
        "140.82.115.9",
        "192.30.252.1",
        "2606:50c0::1",
        "2a0a:a440::5",
        "140.82.128.1",
      ]),
    ).toEqual(["140.82.115.9", "192.30.252.1", "2606:50c0::1", "2a0a:a440::5"]);
  });
});

describe("which list guards a hook name", () => {
  it("/wake and /agent: their own, else the default's; no list at all: any source", () => {
    expect(allowed(prepare({}), "wake", ["192.0.2.1"])).toBe("any");
    const prepared = prepare({
      limits: { default: { allowFrom: ["192.0.2.0/24"] }, agent: { allowFrom: ["198.51.100.0/24"] } },
    });
    expect(allowed(prepared, "wake", ["192.0.2.1", "198.51.100.1"])).toEqual(["192.0.2.1"]);
    expect(allowed(prepared, "agent", ["192.0.2.1", "198.51.100.1"])).toEqual(["198.51.100.1"]);
  });

  it("a mapping: its own list, else the default's", () => {
    const prepared = prepare({
      limits: { default: { allowFrom: ["192.0.2.0/24"] } },
      mappings: [wake("own", { allowFrom: ["198.51.100.0/24"] }), wake("plain")],
    });
    expect(allowed(prepared, "own", ["192.0.2.1", "198.51.100.1"])).toEqual(["198.51.100.1"]);
    expect(allowed(prepared, "plain", ["192.0.2.1", "198.51.100.1"])).toEqual(["192.0.2.1"]);
  });

  it("a name several mappings could claim: any of their lists lets an address in", () => {
    const prepared = prepare({
      mappings: [
        wake("push", { match: { path: "gh", headers: { "x-event": "push" } }, allowFrom: ["192.0.2.0/24"] }),
        wake("ping", {
          match: { path: "gh", headers: { "x-event": "ping" } },
          allowFrom: ["198.51.100.0/24"],
        }),
        // No match.path: a candidate of every name, "gh" included.
        { id: "any-name", action: "wake", textTemplate: "x", allowFrom: ["203.0.113.0/24"] },
      ],
    });
    expect(allowed(prepared, "gh", ["192.0.2.1", "198.51.100.1", "203.0.113.1", "8.8.8.8"])).toEqual([
      "192.0.2.1",
      "198.51.100.1",
      "203.0.113.1",
    ]);
    expect(allowed(prepared, "other", ["192.0.2.1", "203.0.113.1"])).toEqual(["203.0.113.1"]);
    expect(allowed(prepared, "", ["203.0.113.1"])).toBe("any");
  });

  it("a mapping without match.path is a candidate of every name: one without any list opens every name", () => {
    const prepared = prepare({
      mappings: [
        wake("guarded", { allowFrom: ["192.0.2.0/24"] }),
        { id: "catch-all", action: "wake", textTemplate: "x" },
      ],
    });
    expect(allowed(prepared, "guarded", ["8.8.8.8"])).toBe("any");
    expect(allowed(prepared, "anything", ["8.8.8.8"])).toBe("any");
  });

  it("a candidate without its own list counts with the default's", () => {
    const prepared = prepare({
      limits: { default: { allowFrom: ["192.0.2.0/24"] } },
      mappings: [
        wake("push", {
          match: { path: "gh", headers: { "x-event": "push" } },
          allowFrom: ["198.51.100.0/24"],
        }),
        wake("ping", { match: { path: "gh", headers: { "x-event": "ping" } } }),
      ],
    });
    expect(allowed(prepared, "gh", ["192.0.2.1", "198.51.100.1", "8.8.8.8"])).toEqual([
      "192.0.2.1",
      "198.51.100.1",
    ]);
  });

  it("a name nothing claims, and the bare base path, take the default's list", () => {
    const prepared = prepare({
      limits: { default: { allowFrom: ["192.0.2.0/24"] } },
      mappings: [wake("ci", { allowFrom: ["198.51.100.0/24"] })],
    });
    expect(allowed(prepared, "nothing-here", ["192.0.2.1", "198.51.100.1"])).toEqual(["192.0.2.1"]);
    expect(allowed(prepared, "", ["192.0.2.1", "198.51.100.1"])).toEqual(["192.0.2.1"]);
    expect(
      allowed(prepare({ mappings: [wake("ci", { allowFrom: ["198.51.100.0/24"] })] }), "x", ["8.8.8.8"]),
    ).toBe("any");
  });
});

describe("ranges files", () => {
  it("ships GitHub's webhook ranges under `github`, saying where they came from and when", () => {
    const { ranges, problems: found } = parseRangesFile(readFileSync(BUNDLED_RANGES_FILE, "utf8"), "bundled");
    expect(found).toEqual([]);
    const github = ranges.get("github")!;
    expect(github.ranges).toEqual([
      "192.30.252.0/22",
      "185.199.108.0/22",
      "140.82.112.0/20",
      "143.55.64.0/20",
      "2a0a:a440::/29",
      "2606:50c0::/32",
    ]);
    expect(github.source).toContain("https://api.github.com/meta");
    expect(github.retrieved).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("hooks.addressRanges, relative to the config file, adds names and replaces a bundled one", () => {
    const dir = makeTempDir("ranges-");
    writeFileSync(
      path.join(dir, "ranges.json"),
      JSON.stringify({
        github: { source: "a copy of https://api.github.com/meta", ranges: ["192.0.2.0/24"] },
        office: ["198.51.100.0/24", "2001:db8::/48"],
      }),
    );
    const prepared = prepare(
      {
        addressRanges: "ranges.json",
        mappings: [wake("gh", { allowFrom: ["github"] }), wake("office", { allowFrom: ["office"] })],
      },
      dir,
    );
    expect(prepared.config.addressRanges).toBe(path.join(dir, "ranges.json"));
    expect(allowed(prepared, "gh", ["192.0.2.1", "140.82.115.9"])).toEqual(["192.0.2.1"]);
    expect(allowed(prepared, "office", ["198.51.100.1", "2001:db8::1", "192.0.2.1"])).toEqual([
      "198.51.100.1",
      "2001:db8::1",
    ]);
  });

  it("a file that cannot be used is a config error at hooks.addressRanges naming the file and the entry", () => {
    const dir = makeTempDir("ranges-");
    const file = path.join(dir, "ranges.json");
    expect(problems({ addressRanges: "missing.json" }, dir)).toEqual([
      `hooks.addressRanges: cannot read ${path.join(dir, "missing.json")}: no such file`,
    ]);
    writeFileSync(file, "{ github: [] ");
    expect(problems({ addressRanges: "ranges.json" }, dir)).toEqual([
      expect.stringMatching(new RegExp(`^hooks\\.addressRanges: ${file}: is not valid JSON: `)),
    ]);
    writeFileSync(
      file,
      JSON.stringify({
        office: ["198.51.100.0/24", "198.51.100.300", "github"],
        loopback: ["127.0.0.1"],
        "my.range": ["192.0.2.1"],
        empty: [],
        odd: 42,
      }),
    );
    expect(problems({ addressRanges: "ranges.json" }, dir)).toEqual([
      `hooks.addressRanges: ${file}: odd: must be a list of ranges, or { ranges, source?, retrieved? }`,
    ]);
    writeFileSync(
      file,
      JSON.stringify({
        office: ["198.51.100.0/24", "198.51.100.300", "github"],
        loopback: ["127.0.0.1"],
        "my.range": ["192.0.2.1"],
        empty: [],
      }),
    );
    expect(problems({ addressRanges: "ranges.json" }, dir)).toEqual([
      `hooks.addressRanges: ${file}: office.ranges[1]: invalid IP address: 198.51.100.300`,
      `hooks.addressRanges: ${file}: office.ranges[2]: "github" is a name, not an address or a CIDR range`,
      `hooks.addressRanges: ${file}: "loopback" is proxy-addr's own name and cannot be redefined`,
      `hooks.addressRanges: ${file}: "my.range": a range name is letters, digits, "-" and "_", starting with a letter`,
      `hooks.addressRanges: ${file}: empty.ranges: must list at least one address or range`,
    ]);
  });
});

describe("config errors in allowFrom", () => {
  it("names each bad entry by its path, with a did-you-mean hint for a misspelt name", () => {
    expect(
      problems({
        limits: {
          default: { allowFrom: ["10.0.0.0/33"] },
          wake: { allowFrom: ["loopbak"] },
          agent: { allowFrom: ["192.0.2.1", "not an address"] },
        },
        mappings: [wake("a"), wake("b"), wake("c", { allowFrom: ["github", "githb", "zzzzzz"] })],
      }),
    ).toEqual([
      'hooks.limits.default.allowFrom[0]: "10.0.0.0/33" is not an address, a CIDR range or a range name: invalid range on address: 10.0.0.0/33',
      'hooks.limits.wake.allowFrom[0]: unknown range "loopbak" (did you mean "loopback"?)',
      'hooks.limits.agent.allowFrom[1]: "not an address" is not an address, a CIDR range or a range name: invalid IP address: not an address',
      'hooks.mappings[2].allowFrom[1]: unknown range "githb" (did you mean "github"?)',
      'hooks.mappings[2].allowFrom[2]: unknown range "zzzzzz" (known names: loopback, linklocal, uniquelocal, github)',
    ]);
  });

  it("an empty list is an error: removing it is how any source is allowed", () => {
    expect(
      problems({ mappings: [wake("a", { allowFrom: [] })], limits: { default: { allowFrom: [] } } }),
    ).toEqual([
      "hooks.mappings[0].allowFrom: must list at least one address or range: remove it to allow any source",
      "hooks.limits.default.allowFrom: must list at least one address or range: remove it to allow any source",
    ]);
  });

  it("a name from hooks.addressRanges is known to allowFrom; a misspelling of it is hinted", () => {
    const dir = makeTempDir("ranges-");
    writeFileSync(path.join(dir, "ranges.json"), JSON.stringify({ office: ["198.51.100.0/24"] }));
    expect(
      problems({ addressRanges: "ranges.json", mappings: [wake("a", { allowFrom: ["ofice"] })] }, dir),
    ).toEqual(['hooks.mappings[0].allowFrom[0]: unknown range "ofice" (did you mean "office"?)']);
  });
});
