/** @module The inspector as plain HTML pages, no script: what a host's sandboxed frame can show (list, detail, dry run, fixture, comparison). */
import type { Comparison } from "./inspector-actions.js";
import { VIEW_CSS } from "./inspector-html-style.js";
import { escapeHtml } from "./inspector-page.js";
import type { InspectorDetail, InspectorSummary } from "./inspector-source.js";

/**
 * Every link is relative: `toBase` leads from the page at hand back to the base path, so the pages work under any
 * prefix a host or a proxy puts in front of them.
 */
export interface ViewContext {
  /** A relative path from this page to `<basePath>/`, e.g. `./inspector/`, `./`, `../`. */
  toBase: string;
  journaling: boolean;
}

/** The one escape: every value from a request, a config or a query goes through it, in text and in attributes. */
const h = escapeHtml;

const enc = encodeURIComponent;

/** The statuses offered as filter links: a sandboxed frame submits no form, but it follows links. */
const STATUS_FILTERS = ["", "2xx", "4xx", "5xx", "401", "refused", "duplicate", "pending", "done"];

const REFRESH_SECONDS = 2;

function layout(ctx: ViewContext, title: string, body: string, refresh = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refresh ? `<meta http-equiv="refresh" content="${REFRESH_SECONDS}">\n` : ""}<title>${h(title)} · hooks inspector</title>
<style>${VIEW_CSS}</style>
</head>
<body>
<header><a href="${h(ctx.toBase)}" class="home">hooks inspector</a></header>
<main>
${body}
</main>
</body>
</html>
`;
}

function time(at: unknown): string {
  return typeof at === "number" && Number.isFinite(at) ? new Date(at).toISOString() : String(at ?? "");
}

/** A value of any shape as text: scalars as they are, the rest as indented JSON. */
function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value, null, 2);
}

function cell(value: unknown): string {
  return value !== null && typeof value === "object" ? `<pre>${h(text(value))}</pre>` : h(text(value));
}

/** A name → value record as a two-column table. */
function pairs(record: Record<string, unknown> | undefined, id: string): string {
  const rows = Object.entries(record ?? {});
  if (rows.length === 0) return `<p class="none" id="${id}">none</p>`;
  return `<table id="${id}" class="pairs">\n${rows
    .map(([name, value]) => `<tr><th>${h(name)}</th><td>${cell(value)}</td></tr>`)
    .join("\n")}\n</table>`;
}

/** A list of records as a table whose columns are every key any of them has: fields added later show up. */
function records(items: readonly unknown[], id: string): string {
  if (items.length === 0) return `<p class="none" id="${id}">none</p>`;
  const objects = items.map((item) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? (item as Record<string, unknown>)
      : { value: item },
  );
  const columns = [...new Set(objects.flatMap((item) => Object.keys(item)))];
  const head = columns.map((column) => `<th>${h(column)}</th>`).join("");
  const body = objects
    .map((item) => `<tr>${columns.map((column) => `<td>${cell(item[column])}</td>`).join("")}</tr>`)
    .join("\n");
  return `<table id="${id}" class="records">\n<tr>${head}</tr>\n${body}\n</table>`;
}

/** Names for the fields known today; a field added later shows under its own name. */
const LABELS: Record<string, string> = {
  id: "Journal key",
  requestId: "Request id",
  at: "Time",
  hook: "Hook",
  mappingId: "Mapping",
  status: "Status",
  state: "State",
  code: "Code",
  reason: "Reason",
  durationMs: "Duration (ms)",
  replayOf: "Replay of",
  client: "Client",
  method: "Method",
  url: "URL",
  verification: "Verification",
  signed: "Signed",
  error: "Answer",
  note: "Note",
  candidates: "Mapping verdicts",
  events: "Planned events",
  actions: "Actions",
  logs: "Logs",
  body: "Answer body",
};

const label = (name: string) => LABELS[name] ?? name;

/** Any object, generically: scalars in a definition list, lists as tables, nested objects as their own part. */
function generic(value: Record<string, unknown>, idPrefix: string): string {
  const facts: string[] = [];
  const parts: string[] = [];
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const id = `${idPrefix}-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    if (Array.isArray(item)) parts.push(`<h3>${h(label(name))}</h3>\n${records(item, id)}`);
    else if (item !== null && typeof item === "object")
      parts.push(`<h3>${h(label(name))}</h3>\n${pairs(item as Record<string, unknown>, id)}`);
    else facts.push(`<dt>${h(label(name))}</dt><dd>${h(text(item))}</dd>`);
  }
  const list = facts.length === 0 ? "" : `<dl id="${idPrefix}-facts">\n${facts.join("\n")}\n</dl>\n`;
  return list + parts.join("\n");
}

function bodyText(body: InspectorDetail["body"]): string {
  if (body === undefined) return "(no body kept)";
  if (body.kind === "json" || body.kind === "form") return JSON.stringify(body.value, null, 2);
  if (body.kind === "base64") return `(not UTF-8; base64)\n${String(body.value)}`;
  return String(body.value);
}

export interface ListView {
  rows: InspectorSummary[];
  filter: { status?: string; hook?: string; text?: string; before?: number };
  /** The journal key picked as the left side of a comparison: each row then links to compare with it. */
  compareWith?: string;
}

function query(params: Record<string, string | number | undefined>): string {
  const kept = Object.entries(params).filter(([, value]) => value !== undefined && value !== "");
  return kept.length === 0
    ? ""
    : `?${kept.map(([name, value]) => `${name}=${enc(String(value))}`).join("&")}`;
}

export function listPage(ctx: ViewContext, view: ListView): string {
  const { filter, compareWith } = view;
  const keep = { hook: filter.hook, text: filter.text, a: compareWith };
  const statusLinks = STATUS_FILTERS.map((status) => {
    const label = status === "" ? "all" : status;
    const current = (filter.status ?? "") === status ? ' aria-current="true"' : "";
    return `<a href="${h(ctx.toBase)}${h(query({ status, ...keep }))}"${current}>${h(label)}</a>`;
  }).join(" ");
  const hookFilter = filter.hook
    ? ` <span class="filter">hook <strong>${h(filter.hook)}</strong> <a href="${h(ctx.toBase)}${h(query({ status: filter.status, text: filter.text, a: compareWith }))}">show every hook</a></span>`
    : "";
  const form = `<form method="get" action="${h(ctx.toBase)}" role="search">
${filter.status ? `<input type="hidden" name="status" value="${h(filter.status)}">` : ""}${filter.hook ? `<input type="hidden" name="hook" value="${h(filter.hook)}">` : ""}${compareWith ? `<input type="hidden" name="a" value="${h(compareWith)}">` : ""}
<label>Text <input type="text" name="text" value="${h(filter.text ?? "")}" placeholder="request id, mapping, reason, address"></label>
<button type="submit">Search</button>
</form>`;
  const live =
    filter.before === undefined
      ? `<p class="live">Refreshes every ${REFRESH_SECONDS} s.</p>`
      : `<p class="live">Requests before ${h(time(filter.before))}. <a href="${h(ctx.toBase)}${h(query({ status: filter.status, ...keep }))}">Back to the newest</a></p>`;
  const journalOff = ctx.journaling
    ? ""
    : `<p id="journal-off" class="note">The journal is off: only requests since the start are listed, without their bodies. Set <code>journal.enabled</code> to <code>true</code> to keep them.</p>`;
  const comparing = compareWith
    ? `<p class="note">Comparing with <strong>${h(compareWith)}</strong>: pick the other request. <a href="${h(ctx.toBase)}${h(query({ status: filter.status, hook: filter.hook, text: filter.text }))}">Cancel</a></p>`
    : "";
  const rows = view.rows
    .map((row) => {
      const link = `${ctx.toBase}r/${enc(row.id)}`;
      const outcome = [row.state, row.reason ?? row.code, row.replayOf ? "replay" : undefined]
        .filter(Boolean)
        .join(" · ");
      const compare = compareWith
        ? `<td><a href="${h(`${ctx.toBase}compare${query({ a: compareWith, b: row.id })}`)}">compare</a></td>`
        : "";
      return `<tr data-id="${h(row.id)}" class="status-${h(String(row.status).slice(0, 1))}xx">
<td><a href="${h(link)}">${h(time(row.at))}</a></td>
<td><a href="${h(`${ctx.toBase}${query({ status: filter.status, hook: row.hook, a: compareWith })}`)}">${h(row.hook)}</a></td>
<td>${h(row.mappingId ?? "")}</td><td>${h(String(row.status))}</td><td>${h(outcome)}</td>
<td><a href="${h(link)}">${h(row.requestId)}</a></td>
<td>${h(row.client ?? "")}</td><td>${row.durationMs === undefined ? "" : h(`${row.durationMs.toFixed(1)} ms`)}</td>${compare}
</tr>`;
    })
    .join("\n");
  const oldest = view.rows.at(-1)?.at;
  const older =
    oldest === undefined
      ? ""
      : `<p><a href="${h(`${ctx.toBase}${query({ status: filter.status, ...keep, before: oldest })}`)}" id="older">Older requests</a></p>`;
  const table =
    view.rows.length === 0
      ? `<p id="empty">No requests${filter.status || filter.hook || filter.text ? " match" : " yet"}.</p>`
      : `<table id="requests">
<tr><th>Time</th><th>Hook</th><th>Mapping</th><th>Status</th><th>Outcome</th><th>Request id</th><th>Client</th><th>Duration</th>${compareWith ? "<th></th>" : ""}</tr>
${rows}
</table>`;
  const body = `<h1>Requests</h1>
<nav class="filters">Status: ${statusLinks}${hookFilter}</nav>
${form}
${live}${journalOff}${comparing}${table}
${older}`;
  return layout(ctx, "Requests", body, filter.before === undefined);
}

/** What the detail shows in its own parts; every other field of the detail goes to the facts, whatever it is. */
const OWN_PARTS = new Set(["headers", "query", "body", "events", "runs"]);

export interface DetailView {
  detail: InspectorDetail;
  /** The dry run's report (mapping verdicts, planned events), when the request was stored with its body. */
  dryRun?: unknown;
  curl: string;
}

export function detailPage(ctx: ViewContext, { detail, dryRun, curl }: DetailView): string {
  const own = `${ctx.toBase}r/${enc(detail.id)}`;
  const facts = Object.fromEntries(
    Object.entries(detail)
      .filter(([name]) => !OWN_PARTS.has(name))
      .map(([name, value]) => [name, name === "at" ? time(value) : value]),
  );
  const stored = dryRun !== undefined;
  const verdicts = stored
    ? generic(
        Object.fromEntries(
          Object.entries(dryRun as Record<string, unknown>).filter(([name]) =>
            ["note", "status", "mappingId", "candidates"].includes(name),
          ),
        ),
        "verdicts",
      )
    : `<p class="none" id="verdicts">No stored request to run: only accepted requests kept with their body.</p>`;
  const actions = [
    stored ? `<a href="${h(`${own}/dry-run`)}" id="dry-run">Dry run</a>` : "",
    stored ? `<a href="${h(`${own}/fixture`)}" id="fixture">Fixture</a>` : "",
    `<a href="${h(`${ctx.toBase}${query({ a: detail.id })}`)}" id="compare">Compare with another request</a>`,
  ]
    .filter(Boolean)
    .join(" · ");
  const body = `<h1>${h(`${detail.method ?? ""} ${detail.hook} · ${detail.status} ${detail.state}`.trim())}</h1>
<p class="actions">${actions}</p>
<p class="note" id="replay-note">Replay is not offered here, since it sends the request again. Use the reference gateway's inspector, or <code>hooks journal replay ${h(detail.requestId)} --send &lt;url&gt;</code>.</p>
<h2>Facts</h2>
${generic(facts, "detail")}
<h2>Headers</h2>
${pairs(detail.headers, "detail-headers")}
<h2>Query</h2>
${pairs(detail.query, "detail-query")}
<h2>Body${detail.body ? ` (${h(detail.body.kind)})` : ""}</h2>
<pre id="detail-body">${h(bodyText(detail.body))}</pre>
<h2>Planned events and outcomes</h2>
${records(detail.events ?? [], "detail-events")}
<h2>Agent runs</h2>
${records(detail.runs ?? [], "detail-runs")}
<h2>Mapping verdicts</h2>
${verdicts}
<h2>As curl</h2>
<pre id="curl">${h(curl)}</pre>`;
  // A request still under way (an agent turn, a delivery) gets its outcomes as they come.
  return layout(ctx, `Request ${detail.requestId}`, body, detail.state === "pending");
}

export function dryRunPage(ctx: ViewContext, id: string, report: unknown): string {
  const value =
    report !== null && typeof report === "object" ? (report as Record<string, unknown>) : { report };
  const body = `<h1>Dry run of ${h(id)}</h1>
<p><a href="${h(`${ctx.toBase}r/${enc(id)}`)}">Back to the request</a></p>
${generic(value, "dry-run")}`;
  return layout(ctx, `Dry run ${id}`, body);
}

export function fixturePage(ctx: ViewContext, id: string, fixture: string): string {
  const body = `<h1>Fixture of ${h(id)}</h1>
<p><a href="${h(`${ctx.toBase}r/${enc(id)}`)}">Back to the request</a> · <a href="${h(`${ctx.toBase}api/requests/${enc(id)}/fixture`)}" id="download">Download</a> (a framed page cannot download: copy the text, or open the page on its own)</p>
<p class="note">A <code>hooks test</code> fixture, credentials removed; <code>hooks replay</code> signs it afresh.</p>
<pre id="fixture-text">${h(fixture)}</pre>`;
  return layout(ctx, `Fixture ${id}`, body);
}

export function comparePage(ctx: ViewContext, comparison: Comparison): string {
  const side = (which: Comparison["a"]) =>
    `<a href="${h(`${ctx.toBase}r/${enc(which.id)}`)}">${h(which.requestId)}</a> (${h(which.hook)}, ${h(String(which.status))}, ${h(time(which.at))})`;
  const headers =
    comparison.headers.length === 0
      ? `<p class="none" id="compare-headers">none</p>`
      : `<table id="compare-headers" class="records"><tr><th>Header</th><th>A</th><th>B</th></tr>\n${comparison.headers
          .map(
            (change) =>
              `<tr><th>${h(change.name)}</th><td>${h(change.a ?? "(absent)")}</td><td>${h(change.b ?? "(absent)")}</td></tr>`,
          )
          .join("\n")}\n</table>`;
  const lines = comparison.body
    .flatMap((part) => {
      const mark = part.kind === "added" ? "+" : part.kind === "removed" ? "-" : " ";
      return part.lines.map((line) => `<span class="${h(part.kind)}">${h(`${mark} ${line}`)}</span>`);
    })
    .join("\n");
  const body = `<h1>Comparison</h1>
<p>A: ${side(comparison.a)}<br>B: ${side(comparison.b)}</p>
<h2>Headers that differ</h2>
${headers}
<h2>Body</h2>
<pre id="compare-body">${lines}</pre>`;
  return layout(ctx, "Comparison", body);
}

/** An answer that is not a page of data (nothing known, nothing running), still in the page's frame. */
export function messagePage(ctx: ViewContext, title: string, message: string): string {
  return layout(
    ctx,
    title,
    `<h1>${h(title)}</h1>\n<p id="message">${h(message)}</p>\n<p><a href="${h(ctx.toBase)}">Back to the list</a></p>`,
  );
}
