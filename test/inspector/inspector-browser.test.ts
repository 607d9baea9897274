/** @module The inspector page in a real Chromium against a real gateway: live list, detail, dry run, replay, refusals, hostile payloads, and no secret anywhere. */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { AUTH, baseConfig, TOKEN } from "../gateway/support.js";
import { type Browser, type BrowserPage, launchChromium } from "../helpers/chromium.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { postUnescaped } from "../helpers/raw-http.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { CHROMIUM, findBinary, skipReason } from "../helpers/test-servers.js";

const SECRET = "browser-signing-secret-9z8y7x6w5v";
const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts", "inspector");
const skip = skipReason(CHROMIUM);
if (skip) console.log(`skipping the inspector's browser tests: ${skip}`);

/** Markup in every field a sender controls; `window.pwned` is set if any of it ever runs. */
const HOSTILE_SCRIPT = "<script>window.pwned=1;alert(1)</script>";
const HOSTILE_IMG = "<img src=x onerror=window.pwned=2;alert(2)>";

let gateway: GatewayHandle;
/** Whether a heartbeat was asked for and has not run yet (the gateway logs `heartbeat` when it has). */
const heartbeat = { due: false, waiting: [] as (() => void)[] };
const logger = {
  ...silentGatewayLogger,
  info(message: string) {
    if (message !== "heartbeat") return;
    heartbeat.due = false;
    for (const resolve of heartbeat.waiting.splice(0)) resolve();
  },
};
let browser: Browser;
let page: BrowserPage;
const emitted: string[] = [];

/** Sends with node:http, which leaves `<` and `>` in a path as they are (fetch would escape them). */
function sendRaw(
  pathAndQuery: string,
  body: string,
  headers: Record<string, string> = AUTH,
): Promise<{ status: number; requestId: string }> {
  return postUnescaped(gateway.url, pathAndQuery, body, headers);
}

function shot(name: string): Promise<void> {
  return page.screenshot(path.join(ARTIFACTS, `${name}.png`));
}

/** The list's row of this request, once the page shows it (the page polls; nothing reloads): its journal key. */
function rowOf(requestId: string, timeoutMs = 2_000): Promise<string> {
  const wanted = JSON.stringify(requestId);
  return page.waitFor<string>(
    `fetch(document.body.dataset.base + "/api/requests?text=" + encodeURIComponent(${wanted}))
      .then((response) => response.json())
      .then((answer) => {
        const id = answer.requests.find((row) => row.requestId === ${wanted})?.id;
        return id && document.querySelector('#rows tr[data-id="' + CSS.escape(id) + '"]') ? id : undefined;
      })`,
    timeoutMs,
  );
}

/** The list's outcome cell of a row. */
function outcomeCell(id: string): Promise<string> {
  return page.evaluate<string>(`document.querySelector('#rows tr[data-id="${id}"] .outcome').textContent`);
}

/** The detail's headers as "name: value" lines. */
function headerRows(): Promise<string[]> {
  return page.evaluate<string[]>(
    `[...document.querySelectorAll("#detail-headers tr")].map((tr) => tr.querySelector("th").textContent + ": " + tr.querySelector("td").textContent)`,
  );
}

/** Resolves once no heartbeat that was asked for is still to run (each one drains the main session's queue). */
function heartbeatsRun(): Promise<void> {
  return heartbeat.due ? new Promise((resolve) => heartbeat.waiting.push(resolve)) : Promise.resolve();
}

/** Clicks the row and waits for its detail (its facts name its request id, which is its key here). */
async function openRow(id: string): Promise<void> {
  await page.click(`#rows tr[data-id="${id}"]`);
  await page.waitFor(
    `!document.getElementById("detail").hidden && document.getElementById("detail-facts").textContent.includes(${JSON.stringify(id)})`,
  );
}

describe.skipIf(skip !== undefined)("the inspector page in Chromium", () => {
  beforeAll(async () => {
    // This run's screenshots only.
    rmSync(ARTIFACTS, { recursive: true, force: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    const dir = makeTempDir();
    gateway = await startGateway({
      config: baseConfig(
        { server: { metrics: false } },
        {
          mappings: [
            {
              id: "signed",
              match: { path: "signed" },
              action: "wake",
              textTemplate: "signed",
              verify: { scheme: "github", secret: SECRET },
            },
          ],
        },
      ),
      configDir: dir,
      port: 0,
      stateDir: `${dir}/state`,
      logger,
    });
    gateway.bus.on("session:system-event", (event) => emitted.push(event.text));
    gateway.bus.on("heartbeat:request", () => {
      heartbeat.due = true;
    });
    browser = await launchChromium(findBinary("chromium"));
    page = await browser.newPage();
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await cleanupCli();
  });

  it("without a session shows the login form and no data; the API answers 401", async () => {
    await sendRaw("/hooks/wake", JSON.stringify({ text: "sent before anyone logged in" }));
    await page.goto(gateway.inspectorUrl!);
    expect(await page.evaluate(`document.body.dataset.view`)).toBe("login");
    expect(await page.evaluate(`!!document.getElementById("login-form")`)).toBe(true);
    expect(await page.evaluate(`document.body.textContent.includes("sent before anyone")`)).toBe(false);
    expect(
      await page.evaluate(`fetch(document.body.dataset.base + "/api/requests").then((r) => r.status)`),
    ).toBe(401);
    await shot("01-login");
  });

  it("the printed link logs in, drops the key from the address bar, and lists requests live", async () => {
    await page.goto(`${gateway.inspectorUrl}#key=${gateway.inspectorKey}`);
    await page.waitFor(
      `document.body.dataset.view === "app" && document.querySelectorAll("#rows tr[data-id]").length > 0`,
    );
    expect(await page.evaluate(`location.hash`)).toBe("");
    // Marked, so that a reload would show: the new row must come without one.
    await page.evaluate(`window.notReloaded = true`);
    const started = Date.now();
    const sent = await sendRaw("/hooks/wake", JSON.stringify({ text: "live row" }));
    const id = await rowOf(sent.requestId);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await page.evaluate(`window.notReloaded`)).toBe(true);
    expect(await page.evaluate(`document.querySelector("#rows tr").dataset.id`)).toBe(id);
    await shot("02-live-list");
  });

  it("opens a request's detail; a dry run shows its plan and emits nothing; a replay emits once, marked", async () => {
    const sent = await sendRaw("/hooks/wake", JSON.stringify({ text: "replay this one" }), {
      ...AUTH,
      "x-trace": "first",
    });
    const id = await rowOf(sent.requestId);
    await openRow(id);
    await page.waitFor(`document.getElementById("detail-body").textContent.includes("replay this one")`);
    expect(await page.evaluate(`document.getElementById("detail-headers").textContent`)).toContain("x-trace");
    const before = emitted.length;
    await page.click("#action-dry-run");
    await page.waitFor(`document.getElementById("dry-run-events")?.children.length === 2`);
    expect(await page.evaluate(`document.getElementById("dry-run-report").textContent`)).toMatch(
      /nothing was sent.*session:system-event.*heartbeat:request/s,
    );
    expect(emitted.length).toBe(before);
    await shot("03-dry-run");
    await page.click("#action-replay");
    const said = await page.waitFor<string>(`document.getElementById("replay-result")?.textContent`);
    expect(said).toMatch(/^replayed: answered 200, new request id /);
    expect(emitted.slice(before)).toHaveLength(1);
    expect(emitted.at(-1)).toContain("replay this one");
    const replayId = said.split(" ").at(-1)!;
    const replayRow = await rowOf(replayId);
    expect(
      await page.evaluate(`document.querySelector('#rows tr[data-id="${replayRow}"] .outcome').textContent`),
    ).toMatch(/replay/);
    await openRow(replayRow);
    await page.waitFor(`document.getElementById("detail-facts").textContent.includes("Replay of${id}")`);
    await shot("04-replay");
  });

  it("a refused request shows its reason; a 401 appears live with its reason, address, explanation and headers", async () => {
    // Sent at once: the page's next poll shows them all.
    const started = Date.now();
    const [bad, noToken, stranger] = await Promise.all([
      sendRaw("/hooks/wake", "{not json"),
      sendRaw("/hooks/wake", JSON.stringify({ text: "x" }), { "x-trace": "no-token" }),
      sendRaw("/hooks/wake", JSON.stringify({ text: "x" }), { authorization: "Bearer wrong" }),
    ]);
    expect([bad.status, noToken.status, stranger.status]).toEqual([400, 401, 401]);
    const id = await rowOf(bad.requestId);
    const missing = await rowOf(noToken.requestId);
    const wrong = await rowOf(stranger.requestId);
    expect(Date.now() - started).toBeLessThan(2_000);
    await openRow(id);
    const facts = await page.waitFor<string>(
      `document.getElementById("detail-facts").textContent.includes("INVALID_JSON") && document.getElementById("detail-facts").textContent`,
    );
    expect(facts).toMatch(/VerificationINVALID_JSON/);
    expect(await outcomeCell(missing)).toMatch(/^refused · TOKEN_MISSING · from (::ffff:)?127\.0\.0\.1$/);
    expect(await outcomeCell(wrong)).toMatch(/^refused · TOKEN_WRONG · from /);
    await openRow(missing);
    const missingFacts = await page.evaluate<string>(`document.getElementById("detail-facts").textContent`);
    expect(missingFacts).toContain("ReasonTOKEN_MISSING");
    expect(missingFacts).toContain("What to checkNo token was sent");
    expect(missingFacts).toMatch(/Client(::ffff:)?127\.0\.0\.1/);
    expect(missingFacts).toContain("RequestPOST /hooks/wake");
    const missingHeaders = await headerRows();
    expect(missingHeaders).toContain("x-trace: no-token");
    expect(missingHeaders.some((row) => row.startsWith("authorization"))).toBe(false);

    await openRow(wrong);
    expect(await page.evaluate(`document.getElementById("detail-facts").textContent`)).toContain(
      "What to checkA token was sent but it is not the hook token",
    );
    expect(await headerRows()).toContain("authorization: [redacted]");
    await shot("05-refused-detail");
    await page.type("#filter-status", "401");
    await page.waitFor(
      `[...document.querySelectorAll("#rows tr[data-id]")].length > 0 && [...document.querySelectorAll("#rows .status")].every((cell) => cell.textContent === "401")`,
    );
    await shot("05-refused-list");
    await page.type("#filter-status", "");
  });

  it("an accepted wake shows its system event queued, and the next one coalesced behind it", async () => {
    // The queue is empty once every heartbeat asked for has run: then the first wake is queued, the second joins it.
    await heartbeatsRun();
    const sent = [];
    for (const text of ["first of two", "second of two"])
      sent.push(await sendRaw("/hooks/wake", JSON.stringify({ text, mode: "next-heartbeat" })));
    const first = await rowOf(sent[0]!.requestId);
    const second = await rowOf(sent[1]!.requestId);
    await page.waitFor(
      `document.querySelector('#rows tr[data-id="${first}"] .outcome').textContent === "queued"`,
    );
    await page.waitFor(
      `document.querySelector('#rows tr[data-id="${second}"] .outcome').textContent === "coalesced"`,
    );
    await openRow(first);
    expect(await page.evaluate(`document.getElementById("detail-events").textContent`)).toMatch(
      /^session:system-event \S+ → queued$/,
    );
    await openRow(second);
    expect(await page.evaluate(`document.getElementById("detail-events").textContent`)).toMatch(
      /^session:system-event \S+ → coalesced$/,
    );
    expect(await page.evaluate(`document.getElementById("detail-facts").textContent`)).toContain(
      "Verificationtoken accepted",
    );
    await shot("05-accepted-outcome");
  });

  it("renders a hostile payload as text: no script runs, no element is injected", async () => {
    const hostile = await sendRaw(
      `/hooks/wake?q=${encodeURIComponent(HOSTILE_SCRIPT)}&${encodeURIComponent(HOSTILE_IMG)}=1`,
      JSON.stringify({
        text: HOSTILE_IMG,
        [HOSTILE_IMG]: HOSTILE_SCRIPT,
        nested: { [HOSTILE_SCRIPT]: [HOSTILE_IMG] },
      }),
      { ...AUTH, "x-evil": HOSTILE_IMG, "x-evil-2": HOSTILE_SCRIPT },
    );
    expect(hostile.status).toBe(200);
    const badPath = await sendRaw("/hooks/<img/src=x/onerror=window.pwned=3>", "{}");
    const scriptPath = await sendRaw("/hooks/<script>window.pwned=4</script>", "{}");
    expect([badPath.status, scriptPath.status]).toEqual([404, 404]);
    const id = await rowOf(hostile.requestId);
    await rowOf(scriptPath.requestId);
    await openRow(id);
    await page.waitFor(`document.getElementById("detail-headers").textContent.includes("x-evil-2")`);
    const text = await page.evaluate<string>(`document.body.textContent`);
    expect(text).toContain(HOSTILE_IMG);
    expect(text).toContain(HOSTILE_SCRIPT);
    expect(text).toContain("<script>window.pwned=4</script>");
    expect(await page.evaluate(`document.querySelectorAll("img").length`)).toBe(0);
    expect(await page.evaluate(`document.querySelectorAll("script").length`)).toBe(1);
    expect(await page.evaluate(`document.querySelectorAll("[onerror]").length`)).toBe(0);
    expect(await page.evaluate(`window.pwned`)).toBeUndefined();
    // Comparing it with another request puts the same text into the diff view.
    const other = await sendRaw("/hooks/wake", JSON.stringify({ text: "plain" }));
    const otherId = await rowOf(other.requestId);
    await page.click(`#rows tr[data-id="${id}"] input`);
    await page.click(`#rows tr[data-id="${otherId}"] input`);
    await page.waitFor(`!document.getElementById("compare").disabled`);
    await page.click("#compare");
    await page.waitFor(
      `!document.getElementById("comparison").hidden && document.getElementById("comparison-body").children.length > 0`,
    );
    expect(await page.evaluate(`document.getElementById("comparison-headers").textContent`)).toContain(
      "x-evil",
    );
    expect(await page.evaluate(`document.querySelectorAll("img").length`)).toBe(0);
    expect(page.record.dialogs).toEqual([]);
    await shot("06-hostile-detail");
    await page.evaluate(`document.getElementById("comparison").scrollIntoView()`);
    await shot("07-compare");
  });

  it("copies a curl line with a placeholder, and no page or API answer held the token, secret or key", async () => {
    const sent = await sendRaw("/hooks/wake", JSON.stringify({ text: `contains ${TOKEN} itself` }));
    const id = await rowOf(sent.requestId);
    await openRow(id);
    await page.click("#action-curl");
    const curl = await page.waitFor<string>(`document.getElementById("curl-line")?.textContent`);
    expect(curl).toContain("$HOOKS_TOKEN");
    await page.waitFor(`document.getElementById("detail-body").textContent.includes("[redacted]")`);
    await shot("08-curl");
    await page.settle();
    const answers = page.record.responses;
    expect(answers.some((answer) => answer.url.includes("/api/requests"))).toBe(true);
    for (const answer of answers) {
      expect(answer.body, answer.url).not.toContain(TOKEN);
      expect(answer.body, answer.url).not.toContain(SECRET);
      expect(answer.body, answer.url).not.toContain(gateway.inspectorKey!);
    }
    expect(page.record.errors).toEqual([]);
    expect(page.record.console.filter((line) => /Content Security Policy|Refused to/.test(line))).toEqual([]);
  });
});
