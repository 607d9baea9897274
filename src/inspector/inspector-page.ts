/** @module The inspector's HTML shell (the list or the login form) and its one script and stylesheet, shipped in the package beside `dist/`. */
import { readFileSync } from "node:fs";

/** The page's static files: `assets/inspector/` at the package root, two levels above this module in `src/` and in `dist/`. */
const ASSETS = new URL("../../assets/inspector/", import.meta.url);

export interface InspectorAsset {
  type: string;
  body: Buffer;
}

/** Read when a handler is made: the files do not change while the process runs. */
export function inspectorAssets(): ReadonlyMap<string, InspectorAsset> {
  return new Map([
    [
      "inspector.js",
      { type: "text/javascript; charset=utf-8", body: readFileSync(new URL("inspector.js", ASSETS)) },
    ],
    [
      "inspector.css",
      { type: "text/css; charset=utf-8", body: readFileSync(new URL("inspector.css", ASSETS)) },
    ],
  ]);
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** For the few values the server writes into the HTML (the base path): payload values only ever reach the DOM as text, from the script. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

export interface PageOptions {
  basePath: string;
  view: "login" | "app";
  journaling: boolean;
}

export function inspectorPage({ basePath, view, journaling }: PageOptions): string {
  const base = escapeHtml(basePath);
  const body = view === "login" ? LOGIN : APP;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>hooks inspector</title>
<link rel="stylesheet" href="${base}/assets/inspector.css">
<script src="${base}/assets/inspector.js" defer></script>
</head>
<body data-view="${view}" data-base="${base}" data-journaling="${journaling}">
${body}
</body>
</html>
`;
}

const LOGIN = `<main id="login">
<h1>hooks inspector</h1>
<p>Open the <code>inspector:</code> link that <code>hooks serve</code> printed, or paste its key (the part after <code>#key=</code>).</p>
<form id="login-form">
<label for="login-key">Key</label>
<input id="login-key" type="password" autocomplete="off" spellcheck="false">
<button type="submit">Open</button>
</form>
<p id="login-error" role="alert"></p>
</main>`;

const APP = `<header>
<h1>hooks inspector</h1>
<form id="filters" role="search">
<label>Status <select id="filter-status">
<option value="">all</option><option value="2xx">2xx</option><option value="4xx">4xx</option><option value="5xx">5xx</option>
<option value="401">401</option><option value="refused">refused</option><option value="duplicate">duplicate</option>
<option value="pending">pending</option><option value="done">done</option>
</select></label>
<label>Hook <input id="filter-hook" type="text" placeholder="wake, github/push, …"></label>
<label>Text <input id="filter-text" type="text" placeholder="request id, mapping, reason, address"></label>
<span id="live" aria-live="polite"></span>
</form>
</header>
<p id="journal-off" hidden>The journal is off: only requests since the gateway started are listed, without their bodies. Set <code>hooks.journal.enabled</code> to <code>true</code> to keep them.</p>
<main>
<section id="list-pane">
<table id="requests">
<thead><tr><th></th><th>Time</th><th>Hook</th><th>Mapping</th><th>Status</th><th>Outcome</th><th>Duration</th></tr></thead>
<tbody id="rows"></tbody>
</table>
<p><button type="button" id="older">Older requests</button> <button type="button" id="compare" disabled>Compare the two ticked</button></p>
</section>
<section id="detail" hidden>
<h2 id="detail-title"></h2>
<div id="detail-actions">
<button type="button" id="action-dry-run">Replay as a dry run</button>
<button type="button" id="action-replay">Replay</button>
<button type="button" id="action-fixture">Save as fixture</button>
<button type="button" id="action-curl">Copy as curl</button>
</div>
<div id="action-result"></div>
<dl id="detail-facts"></dl>
<h3>Headers</h3><table id="detail-headers"></table>
<h3>Query</h3><table id="detail-query"></table>
<h3>Body</h3><pre id="detail-body"></pre>
<h3>Planned events</h3><ul id="detail-events"></ul>
<h3>Mapping verdicts</h3>
<p class="note">From a dry run of the stored request against the current config: nothing is sent.</p>
<ul id="detail-verdicts"></ul>
</section>
<section id="comparison" hidden>
<h2>Comparison</h2>
<p id="comparison-title"></p>
<h3>Headers that differ</h3><table id="comparison-headers"></table>
<h3>Body</h3><pre id="comparison-body"></pre>
</section>
</main>`;
