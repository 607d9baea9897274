/** @module Drives the machine's Chromium (Debian's `/usr/bin/chromium`, nothing downloaded) with playwright-core, behind the few calls the browser tests make. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { chromium, type Page } from "playwright-core";

/** What the page did that a test checks afterwards: dialogs it opened, errors it threw, what the console said. */
export interface PageRecord {
  dialogs: string[];
  errors: string[];
  console: string[];
  /** Every response body the page received (documents, scripts, API answers), by URL. */
  responses: { url: string; status: number; body: string }[];
}

export interface BrowserPage {
  readonly record: PageRecord;
  /** The Playwright page, for what the calls below do not cover (frames, say). */
  readonly page: Page;
  goto(url: string): Promise<void>;
  /** The expression's value (awaited, returned by value); throws what the page threw. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls the expression until it is truthy; its value. */
  waitFor<T = unknown>(expression: string, timeoutMs?: number): Promise<T>;
  /** Clicks as a person does: the element scrolled into view, visible and enabled first. */
  click(selector: string): Promise<void>;
  /** Replaces an input's value as typing does, or picks a select's option (an `input` event fires). */
  type(selector: string, value: string): Promise<void>;
  screenshot(file: string): Promise<void>;
  /** Response bodies still being fetched are in `record.responses` once this resolves. */
  settle(): Promise<void>;
  /** Evaluates in the first child frame whose URL contains `urlPart`; undefined while there is no such frame. */
  evaluateInFrame<T = unknown>(urlPart: string, expression: string): Promise<T | undefined>;
}

export interface Browser {
  newPage(): Promise<BrowserPage>;
  close(): Promise<void>;
}

export async function launchChromium(executable = "/usr/bin/chromium"): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: executable,
    // CI runs as root in a container, where Chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  return {
    async newPage() {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const record: PageRecord = { dialogs: [], errors: [], console: [], responses: [] };
      const bodies: Promise<void>[] = [];
      page.on("dialog", (dialog) => {
        record.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss().catch(() => undefined);
      });
      page.on("pageerror", (error) => record.errors.push(error.message));
      page.on("console", (message) => record.console.push(message.text()));
      page.on("response", (response) => {
        bodies.push(
          response.body().then(
            (body) => {
              record.responses.push({
                url: response.url(),
                status: response.status(),
                body: body.toString("utf8"),
              });
            },
            // A redirect or an aborted load has no body.
            () => undefined,
          ),
        );
      });
      // The browser's own reports (a Content-Security-Policy refusal, say) are log entries, not console calls.
      const session = await page.context().newCDPSession(page);
      session.on("Log.entryAdded", ({ entry }) => record.console.push(`${entry.source}: ${entry.text}`));
      await session.send("Log.enable");
      const evaluate = <T>(expression: string): Promise<T> => page.evaluate(expression) as Promise<T>;
      return {
        record,
        page,
        async goto(url) {
          await page.goto(url);
        },
        evaluate,
        async waitFor<T>(expression: string, timeoutMs = 5_000): Promise<T> {
          // Polled from here, not with waitForFunction: the expression may be a promise (an API call), and one that
          // throws (an element not rendered yet) is not there yet, not a failure.
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const value = await evaluate<T>(expression).catch(() => undefined);
            if (value) return value;
            if (Date.now() > deadline) throw new Error(`timed out waiting for: ${expression}`);
            await delay(25);
          }
        },
        async click(selector) {
          await page.click(selector);
        },
        async type(selector, value) {
          const tag = await page.$eval(selector, (element) => element.tagName);
          if (tag === "SELECT") await page.selectOption(selector, value);
          else await page.fill(selector, value);
        },
        async screenshot(file) {
          mkdirSync(path.dirname(file), { recursive: true });
          await page.screenshot({ path: file });
        },
        async settle() {
          await Promise.all(bodies);
        },
        async evaluateInFrame<T>(urlPart: string, expression: string): Promise<T | undefined> {
          const frame = page
            .frames()
            .find((each) => each !== page.mainFrame() && each.url().includes(urlPart));
          return frame === undefined ? undefined : ((await frame.evaluate(expression)) as T);
        },
      };
    },
    async close() {
      await browser.close();
    },
  };
}
