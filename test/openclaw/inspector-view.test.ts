/** @module The inspector's script-free pages on OpenClaw's route, without a browser: what each page shows, its headers, relative links, hostile payloads as text, no secret. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInspectorHandler } from "../../src/index.js";
import { detailPage } from "../../src/inspector/inspector-html.js";
import { VIEW_CSS, VIEW_CSS_SOURCE } from "../../src/inspector/inspector-html-style.js";
import { escapeHtml } from "../../src/inspector/inspector-page.js";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import {
  GATEWAY_TOKEN,
  HOOK_TOKEN,
  HOSTILE,
  type StandIn,
  startControlUiStandIn,
} from "./control-ui-stand-in.js";

const CSP = `default-src 'none'; style-src ${VIEW_CSS_SOURCE}; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'`;
/** Every element the pages are made of. */
const PAGE_TAGS = [
  "!doctype",
  "html",
  "head",
  "meta",
  "title",
  "link",
  "body",
  "header",
  "main",
  "a",
  "h1",
  "h2",
  "h3",
  "p",
  "nav",
  "style",
  "form",
  "input",
  "label",
  "button",
  "table",
  "tr",
  "th",
  "td",
  "pre",
  "dl",
  "dt",
  "dd",
  "code",
  "strong",
  "span",
  "br",
];
const WRONG_TOKEN = "oc-frame-wrong-token-00112233445566778899";

/** The markup as it goes into a request's path: as is, but for its spaces, which no HTTP client sends raw. */
const RAW = HOSTILE.replaceAll(" ", "%20");

let standIn: StandIn;
/** Every page this file read: none may hold a credential or unescaped markup. */
const pages: { path: string; html: string }[] = [];

async function get(
  path: string,
  headers: Record<string, string> = { authorization: `Bearer ${GATEWAY_TOKEN}` },
) {
  const response = await fetch(`${standIn.url}${path}`, { headers, redirect: "manual" });
  const html = await response.text();
  pages.push({ path, html });
  return { status: response.status, headers: response.headers, html };
}

/** The journal key of a request, once the list API has it. */
async function keyOf(requestId: string): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const response = await fetch(
      `${standIn.url}${INSPECTOR_PATH}/api/requests?text=${encodeURIComponent(requestId)}`,
      {
        headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
      },
    );
    const { requests } = (await response.json()) as { requests: { id: string; requestId: string }[] };
    const found = requests.find((row) => row.requestId === requestId);
    if (found) return found.id;
    if (Date.now() > deadline) throw new Error(`${requestId} not listed`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let deploy: { requestId: string; key: string };
let evil: { requestId: string; key: string };
let refused: { requestId: string; key: string };

beforeAll(async () => {
  standIn = await startControlUiStandIn();
  const sent = await standIn.send("/intake/deploy?source=ci", JSON.stringify({ service: "api-7" }));
  expect(sent.status).toBe(200);
  deploy = { requestId: sent.requestId, key: await keyOf(sent.requestId) };
  // Markup in every field a sender controls: the query's names and values, a header's name and value, body keys
  // and values; the mapping's id carries it too (a config is not trusted markup either).
  const hostile = await standIn.send(
    `/intake/evil?${RAW}=${RAW}&q=${RAW}`,
    JSON.stringify({ a: HOSTILE, [HOSTILE]: { nested: [HOSTILE] } }),
    {
      authorization: `Bearer ${HOOK_TOKEN}`,
      "x-evil": HOSTILE,
      "x-evil'&name": "value",
    },
  );
  expect(hostile.status).toBe(200);
  evil = { requestId: hostile.requestId, key: await keyOf(hostile.requestId) };
  // A hook path of markup, refused for a wrong token: its reason and the path are shown, the token is not.
  const wrong = await standIn.send(`/intake/${RAW}`, JSON.stringify({ a: HOSTILE }), {
    authorization: `Bearer ${WRONG_TOKEN}`,
  });
  expect(wrong.status).toBe(401);
  refused = { requestId: wrong.requestId, key: await keyOf(wrong.requestId) };
});

afterAll(async () => {
  await standIn?.close();
});

describe("the inspector's script-free pages inside OpenClaw (stand-in gateway)", () => {
  it("answer 401 without OpenClaw's auth, and with the hook token", async () => {
    for (const path of [INSPECTOR_PATH, `${INSPECTOR_PATH}/r/${deploy.key}`]) {
      expect((await get(path, {})).status).toBe(401);
      expect((await get(path, { authorization: `Bearer ${HOOK_TOKEN}` })).status).toBe(401);
    }
  });

  it("the list: the requests as a table, refreshing every 2 s, no script, framable by its own origin only", async () => {
    for (const path of [INSPECTOR_PATH, `${INSPECTOR_PATH}/`]) {
      const list = await get(path, { cookie: standIn.frameCookie });
      expect(list.status).toBe(200);
      expect(list.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(list.headers.get("content-security-policy")).toBe(CSP);
      expect(list.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      expect(list.html).toContain('<meta http-equiv="refresh" content="2">');
      expect(list.html).not.toMatch(/<script/i);
      // The one style the policy allows by its hash, inline: the frame's cookie may not go with a stylesheet load.
      expect(list.html).toContain(`<style>${VIEW_CSS}</style>`);
      for (const { requestId } of [deploy, evil, refused]) expect(list.html).toContain(requestId);
      // From the base path without a slash, a relative link must name the base's last segment.
      const prefix = path.endsWith("/") ? "./" : "./inspector/";
      expect(list.html).toContain(`href="${prefix}r/${encodeURIComponent(deploy.key)}"`);
    }
  });

  it("filters by status class, hook and text, as links and a GET form", async () => {
    const only401 = await get(`${INSPECTOR_PATH}/?status=401`);
    expect(only401.html).toContain(refused.requestId);
    expect(only401.html).not.toContain(deploy.requestId);
    const byHook = await get(`${INSPECTOR_PATH}/?hook=deploy`);
    expect(byHook.html).toContain(deploy.requestId);
    expect(byHook.html).not.toContain(evil.requestId);
    const byText = await get(`${INSPECTOR_PATH}/?text=${encodeURIComponent(evil.requestId)}`);
    expect(byText.html).toContain(evil.requestId);
    expect(byText.html).not.toContain(deploy.requestId);
    expect(byText.html).toMatch(/<form method="get" action="\.\/"/);
    expect(byText.html).toContain(`href="./?status=4xx&amp;text=${evil.requestId}"`);
  });

  it("the detail: every field of the request as the API has it, the verdicts of a dry run, the curl line", async () => {
    const api = await get(`${INSPECTOR_PATH}/api/requests/${encodeURIComponent(deploy.key)}`);
    const detail = JSON.parse(api.html) as Record<string, unknown>;
    const page = await get(`${INSPECTOR_PATH}/r/${encodeURIComponent(deploy.key)}`, {
      cookie: standIn.frameCookie,
    });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(CSP);
    expect(page.html).not.toMatch(/http-equiv="refresh"/);
    // Every leaf of the detail shows up (a time as ISO text), whatever its field.
    const leaves = (value: unknown): string[] =>
      value !== null && typeof value === "object" ? Object.values(value).flatMap(leaves) : [String(value)];
    for (const [name, value] of Object.entries(detail)) {
      if (name === "body") continue;
      const shown = name === "at" ? [new Date(value as number).toISOString()] : leaves(value);
      for (const leaf of shown) expect(page.html, `${name}: ${leaf}`).toContain(escapeHtml(leaf));
    }
    expect(page.html).toContain(escapeHtml(JSON.stringify({ service: "api-7" }, null, 2)));
    expect(page.html).not.toMatch(/<th>authorization<\/th><td>(?!\[redacted\])/);
    // The dry run's verdict and the curl line, with no credential in it.
    expect(page.html).toMatch(/<dl id="verdicts-facts">[\s\S]*<dt>Mapping<\/dt><dd>deploy<\/dd>/);
    expect(page.html).toContain("curl -X POST &quot;$HOOKS_URL&quot;");
    expect(page.html).toContain("hooks journal replay");
    expect(page.html).toContain(`href="../r/${encodeURIComponent(deploy.key)}/dry-run"`);
  });

  it("a request still pending reloads its detail every 2 s, a finished one does not", () => {
    const detail = { id: "k", requestId: "r", at: 0, hook: "h", status: 202 };
    const page = (state: string) =>
      detailPage({ toBase: "../", journaling: true }, { detail: { ...detail, state }, curl: "" });
    expect(page("pending")).toContain('<meta http-equiv="refresh" content="2">');
    expect(page("done")).not.toContain("http-equiv");
  });

  it("a field the detail gains later is shown without a change to the page", () => {
    const html = detailPage(
      { toBase: "../", journaling: true },
      {
        detail: {
          id: "k",
          requestId: "r",
          at: 0,
          hook: "h",
          status: 200,
          state: "done",
          futureFact: "FUTURE-FACT",
          futureList: [{ step: "FUTURE-STEP" }],
          events: [{ event: "wake", id: "e1", outcome: "queued", futureColumn: "FUTURE-COLUMN" }],
        } as never,
        curl: "",
      },
    );
    for (const text of [
      "futureFact",
      "FUTURE-FACT",
      "futureList",
      "FUTURE-STEP",
      "futureColumn",
      "FUTURE-COLUMN",
    ])
      expect(html).toContain(text);
  });

  it("the dry run, the fixture and a comparison are GET pages; the dry run sends nothing", async () => {
    const queued = () => standIn.fake.queue.queues.get("agent:main:main")?.length ?? 0;
    const before = queued();
    const dryRun = await get(`${INSPECTOR_PATH}/r/${encodeURIComponent(deploy.key)}/dry-run`, {
      cookie: standIn.frameCookie,
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.html).toContain("nothing was sent or emitted");
    expect(dryRun.html).toContain("Deployed api-7");
    expect(queued()).toBe(before);
    const fixture = await get(`${INSPECTOR_PATH}/r/${encodeURIComponent(deploy.key)}/fixture`);
    expect(fixture.status).toBe(200);
    expect(fixture.html).toContain("api-7");
    const compare = await get(
      `${INSPECTOR_PATH}/compare?a=${encodeURIComponent(deploy.key)}&b=${encodeURIComponent(evil.key)}`,
    );
    expect(compare.status).toBe(200);
    expect(compare.html).toContain('class="removed">-   &quot;service&quot;: &quot;api-7&quot;');
    const picking = await get(`${INSPECTOR_PATH}/?a=${encodeURIComponent(deploy.key)}`);
    expect(picking.html).toContain(
      escapeHtml(`./compare?a=${encodeURIComponent(deploy.key)}&b=${encodeURIComponent(evil.key)}`),
    );
  });

  it("unknown ids and requests without a stored body answer 404 pages; other methods 405", async () => {
    expect((await get(`${INSPECTOR_PATH}/r/nope`)).status).toBe(404);
    expect((await get(`${INSPECTOR_PATH}/r/${encodeURIComponent(refused.key)}/dry-run`)).status).toBe(404);
    const post = await fetch(`${standIn.url}${INSPECTOR_PATH}/r/${encodeURIComponent(deploy.key)}/dry-run`, {
      method: "POST",
      headers: { authorization: `Bearer ${GATEWAY_TOKEN}`, "content-type": "application/json" },
    });
    expect(post.status).toBe(405);
    // The JSON API stays for a caller with the gateway token.
    const api = await fetch(
      `${standIn.url}${INSPECTOR_PATH}/api/requests/${encodeURIComponent(deploy.key)}/dry-run`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${GATEWAY_TOKEN}`, "content-type": "application/json" },
      },
    );
    expect(api.status).toBe(200);
  });

  it("hostile values are text on every page, and every link stays relative", async () => {
    const hostilePages = [
      INSPECTOR_PATH,
      `${INSPECTOR_PATH}/?a=${encodeURIComponent(HOSTILE)}&text=${encodeURIComponent(HOSTILE)}`,
      `${INSPECTOR_PATH}/?hook=${encodeURIComponent(HOSTILE)}`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(evil.key)}`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(evil.key)}/dry-run`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(evil.key)}/fixture`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(refused.key)}`,
      `${INSPECTOR_PATH}/compare?a=${encodeURIComponent(evil.key)}&b=${encodeURIComponent(refused.key)}`,
      `${INSPECTOR_PATH}/r/${encodeURIComponent(HOSTILE)}`,
    ];
    for (const path of hostilePages) {
      const { html, status } = await get(path);
      expect(status, path).toBeLessThan(500);
      // The page's own markup only: no tag a payload brought, no event handler attribute.
      for (const [tag, name, attributes] of html.matchAll(/<\/?([a-zA-Z][^\s>/]*)([^>]*)>/g)) {
        expect(PAGE_TAGS, `${path}: ${tag}`).toContain(name!.toLowerCase());
        // Values are quoted with `"`, which escaping never leaves in one: what is outside quotes is the page's.
        expect(attributes!.replace(/"[^"]*"/g, '""'), `${path}: ${tag}`).not.toMatch(/\son\w+\s*=/i);
      }
      if (status === 200 && path.includes("/r/"))
        expect(html, path).toContain("&lt;script&gt;window.pwned=1");
      for (const [, url] of html.matchAll(/(?:href|src|action)="([^"]*)"/g)) {
        expect(url, path).toMatch(/^\.{1,2}\//);
      }
    }
    const detail = pages.find(
      (page) => page.path === `${INSPECTOR_PATH}/r/${encodeURIComponent(evil.key)}`,
    )!.html;
    // The header's name, the query's names, the body's keys, the mapping's id: all there, as text.
    expect(detail).toContain("x-evil&#39;&amp;name");
    expect(detail).toContain(escapeHtml(`evil-${HOSTILE}`));
    // The query's name ends at the markup's first `=`.
    expect(detail).toContain("<th>&lt;script&gt;window.pwned</th>");
    const refusal = pages.find(
      (page) => page.path === `${INSPECTOR_PATH}/r/${encodeURIComponent(refused.key)}`,
    )!.html;
    expect(refusal).toContain("TOKEN_WRONG");
  });

  it("no page holds a token", () => {
    expect(pages.length).toBeGreaterThan(10);
    for (const { path, html } of pages)
      for (const secret of [HOOK_TOKEN, GATEWAY_TOKEN, WRONG_TOKEN]) expect(html, path).not.toContain(secret);
  });
});

describe("createInspectorHandler's page option", () => {
  it("the reference gateway's default is unchanged: the scripted page, framed by nobody", async () => {
    const handler = createInspectorHandler({
      source: () => undefined,
      auth: { kind: "host" },
      basePath: "/i",
    });
    const headers = new Map<string, string>();
    const res = {
      statusCode: 0,
      headersSent: false,
      setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
      end: () => undefined,
    };
    await handler({ url: "/i", method: "GET", headers: {}, socket: {} } as never, res as never);
    expect(headers.get("content-security-policy")).toMatch(/script-src 'self'.*frame-ancestors 'none'$/);
    expect(headers.get("x-frame-options")).toBe("DENY");
  });

  it("refuses the server-rendered pages with a session login, which they could not offer", () => {
    expect(() =>
      createInspectorHandler({
        source: () => undefined,
        auth: { kind: "session", key: "k".repeat(32) },
        basePath: "/i",
        page: "server-rendered",
      }),
    ).toThrow(/host/);
  });
});
