/** @module The inspector as OpenClaw's Control UI tab shows it, in a real Chromium: a sandboxed frame with a cookie for GETs, the list live, a detail, a filter, a hostile payload as text. */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import { type Browser, type BrowserPage, launchChromium } from "../helpers/chromium.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { CHROMIUM, findBinary, skipReason } from "../helpers/test-servers.js";
import { HOSTILE, type StandIn, startControlUiStandIn } from "./control-ui-stand-in.js";

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts", "openclaw-tab");
const skip = skipReason(CHROMIUM);
if (skip) console.log(`skipping the Control UI tab's browser test: ${skip}`);

/** The list refreshes every 2 s; a new request shows after at most that and one page load. */
const LIVE_WITHIN_MS = 2_500;

let standIn: StandIn;
let browser: Browser;
let page: BrowserPage;

/** Evaluates in the tab's frame (the inspector's route), polling until the value is truthy. */
async function inFrame<T>(expression: string, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await page.evaluateInFrame<T>(INSPECTOR_PATH, expression).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out in the frame waiting for: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const rowLink = (requestId: string) =>
  `document.querySelector('#requests tr[data-id] a[href$="/r/${encodeURIComponent(requestId)}"]')`;

describe.skipIf(skip !== undefined)(
  "the inspector in OpenClaw's Control UI tab (Chromium, stand-in gateway)",
  () => {
    beforeAll(async () => {
      rmSync(ARTIFACTS, { recursive: true, force: true });
      mkdirSync(ARTIFACTS, { recursive: true });
      standIn = await startControlUiStandIn();
      browser = await launchChromium(findBinary("chromium"));
      page = await browser.newPage();
    }, 20_000);

    afterAll(async () => {
      await browser?.close();
      await standIn?.close();
    });

    it("the framed list renders with its stylesheet, and a new request appears without a click", async () => {
      const first = await standIn.send("/intake/deploy", JSON.stringify({ service: "api-1" }));
      expect(first.status).toBe(200);
      await page.goto(`${standIn.url}/`);
      await inFrame(`${rowLink(first.requestId)} !== null`);
      // Styled: the inline style the policy allows by its hash. (Chromium sends the frame's cookie with the frame's
      // navigations only, not with its subresource loads, which are cross-site from its opaque origin.)
      expect(await inFrame<string>("getComputedStyle(document.body).fontFamily")).toMatch(/system-ui/);
      await page.screenshot(path.join(ARTIFACTS, "list.png"));

      const started = Date.now();
      const second = await standIn.send("/intake/deploy", JSON.stringify({ service: "api-2" }));
      await inFrame(`${rowLink(second.requestId)} !== null`, LIVE_WITHIN_MS);
      const elapsed = Date.now() - started;
      console.log(`a new request showed in the framed list after ${elapsed} ms`);
      expect(elapsed).toBeLessThan(LIVE_WITHIN_MS);
    });

    it("a detail link opens the request in the frame; its dry run too", async () => {
      const sent = await standIn.send("/intake/deploy", JSON.stringify({ service: "api-detail" }));
      await inFrame(`${rowLink(sent.requestId)} !== null`);
      await inFrame(`(${rowLink(sent.requestId)}.click(), true)`);
      await inFrame(`location.pathname.includes("/r/") && document.body.textContent.includes("api-detail")`);
      expect(await inFrame<string>(`document.querySelector("h1").textContent`)).toBe(
        "POST deploy · 200 done",
      );
      await page.screenshot(path.join(ARTIFACTS, "detail.png"));
      await inFrame(`(document.getElementById("dry-run").click(), true)`);
      await inFrame(
        `location.pathname.endsWith("/dry-run") && document.body.textContent.includes("nothing was sent or emitted")`,
      );
    });

    it("a status filter link narrows the list in the frame", async () => {
      await inFrame(`(document.querySelector("header a.home").click(), true)`);
      await inFrame(`document.getElementById("requests") !== null && !location.search`);
      await inFrame(`(document.querySelector('nav.filters a[href*="status=401"]').click(), true)`);
      await inFrame(
        `location.search.includes("status=401") && document.querySelector("#empty, #requests") !== null`,
      );
    });

    it("a hostile payload renders as text: no element, no script, no dialog", async () => {
      const raw = HOSTILE.replaceAll(" ", "%20");
      const sent = await standIn.send(
        `/intake/evil?q=${raw}`,
        JSON.stringify({ a: HOSTILE, [HOSTILE]: HOSTILE }),
        {
          authorization: `Bearer oc-frame-hook-token-0123456789abcdef`,
          "x-evil": HOSTILE,
        },
      );
      expect(sent.status).toBe(200);
      await inFrame(`(document.querySelector("header a.home").click(), true)`);
      await inFrame(`${rowLink(sent.requestId)} !== null`);
      await inFrame(`(${rowLink(sent.requestId)}.click(), true)`);
      await inFrame(`location.pathname.includes("/r/") && document.getElementById("detail-body") !== null`);
      const shown = await inFrame<{ elements: number; body: string; headers: string; query: string }>(`({
      elements: document.querySelectorAll("script, img, iframe, textarea, [onerror]").length + 1,
      body: document.getElementById("detail-body").textContent,
      headers: document.getElementById("detail-headers").textContent,
      query: document.getElementById("detail-query").textContent,
    })`);
      expect(shown.elements - 1).toBe(0);
      expect(shown.body).toContain(HOSTILE.replaceAll('"', '\\"'));
      expect(shown.headers).toContain(HOSTILE);
      expect(shown.query).toContain(HOSTILE);
      expect(page.record.dialogs).toEqual([]);
      await page.screenshot(path.join(ARTIFACTS, "hostile.png"));
    });
  },
);
