// The inspector page's one script: logs in with the key from the link's fragment, polls the list, shows a request's
// detail and runs its actions. Everything that comes from a request goes into the page as text (textContent), never
// as markup: a payload is hostile.

(() => {
  const body = document.body;
  const base = body.dataset.base || "";
  const api = (path) => `${base}/api${path}`;
  const $ = (id) => document.getElementById(id);

  /** An element with text content and attributes set through the DOM, never parsed from a string. */
  function el(tag, text, attributes) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    return node;
  }

  /** The key from `#key=…`, and the fragment removed from the address bar and the history. */
  function takeKeyFromFragment() {
    const match = /(?:^#|&)key=([^&]+)/.exec(location.hash);
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    return match ? decodeURIComponent(match[1]) : undefined;
  }

  async function post(path, value) {
    return fetch(api(path), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(value || {}),
      credentials: "same-origin",
    });
  }

  async function getJson(path) {
    const response = await fetch(api(path), { credentials: "same-origin" });
    if (response.status === 401) {
      // The session ended: the page shows the login form again.
      location.reload();
      throw new Error("not logged in");
    }
    const value = await response.json();
    if (!response.ok) throw new Error(value?.error?.message || `HTTP ${response.status}`);
    return value;
  }

  // ---- login ----

  async function logIn(key) {
    const error = $("login-error");
    const response = await post("/session", { key });
    if (response.ok) {
      location.replace(`${base}/`);
      return;
    }
    const answer = await response.json().catch(() => ({}));
    if (error) error.textContent = answer?.error?.message || `The key was refused (${response.status}).`;
  }

  if (body.dataset.view === "login") {
    const fromLink = () => {
      const key = takeKeyFromFragment();
      if (key) void logIn(key);
    };
    fromLink();
    // The link pasted into a tab that already shows this form changes only the fragment: nothing reloads.
    window.addEventListener("hashchange", fromLink);
    $("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      void logIn($("login-key").value.trim());
    });
    return;
  }
  takeKeyFromFragment();
  if (body.dataset.journaling !== "true") $("journal-off").hidden = false;

  // ---- the list ----

  /** `older`: rows fetched with the "older requests" button, shown below the live ones until a filter changes. */
  const state = { selected: undefined, ticked: [], lastList: "", live: [], older: [] };

  function filterQuery() {
    const params = new URLSearchParams();
    const status = $("filter-status").value;
    const hook = $("filter-hook").value.trim();
    const text = $("filter-text").value.trim();
    if (status) params.set("status", status);
    if (hook) params.set("hook", hook);
    if (text) params.set("text", text);
    return params.toString();
  }

  function timeOf(at) {
    const date = new Date(at);
    return `${date.toLocaleDateString()} ${date.toLocaleTimeString()}`;
  }

  /** A refusal's reason; for an accepted request what became of it ("queued", "turn ok · text"), once known. */
  function outcomeOf(row) {
    let text = row.state;
    if (row.state === "refused") {
      text += ` · ${row.reason || row.code || row.status}`;
      if (row.client) text += ` · from ${row.client}`;
    } else if (row.outcome) text = row.outcome;
    if (row.replayOf) text += " · replay";
    return text;
  }

  function renderRows(live) {
    const shown = new Set(live.map((row) => row.id));
    const rows = [...live, ...state.older.filter((row) => !shown.has(row.id))];
    const tbody = $("rows");
    const fresh = rows.map((row) => {
      const tr = el("tr", undefined, {
        "data-id": row.id,
        class: `status-${String(row.status)[0]}xx state-${row.state}`,
      });
      if (row.id === state.selected) tr.classList.add("selected");
      const tick = el("input", undefined, { type: "checkbox", "aria-label": "compare" });
      tick.checked = state.ticked.includes(row.id);
      tick.addEventListener("click", (event) => {
        event.stopPropagation();
        state.ticked = tick.checked
          ? [...state.ticked.filter((id) => id !== row.id), row.id].slice(-2)
          : state.ticked.filter((id) => id !== row.id);
        $("compare").disabled = state.ticked.length !== 2;
        state.lastList = "";
        void refresh();
      });
      const first = el("td");
      first.append(tick);
      tr.append(
        first,
        el("td", timeOf(row.at)),
        el("td", row.hook, { class: "hook" }),
        el("td", row.mappingId || ""),
        el("td", row.status, { class: "status" }),
        el("td", outcomeOf(row), { class: "outcome" }),
        el("td", row.durationMs === undefined ? "" : `${row.durationMs.toFixed(1)} ms`),
      );
      tr.addEventListener("click", () => void openDetail(row.id));
      return tr;
    });
    tbody.replaceChildren(...fresh);
    if (rows.length === 0) {
      const empty = el("td", "No requests yet.", { colspan: "7" });
      const tr = el("tr");
      tr.append(empty);
      tbody.append(tr);
    }
  }

  async function refresh() {
    const live = $("live");
    try {
      const answer = await getJson(`/requests?${filterQuery()}`);
      const text = JSON.stringify(answer.requests);
      if (text !== state.lastList) {
        state.lastList = text;
        state.live = answer.requests;
        renderRows(answer.requests);
      }
      live.textContent = `live · ${new Date().toLocaleTimeString()}`;
      live.className = "";
    } catch (error) {
      live.textContent = `not updating: ${error.message}`;
      live.className = "offline";
    }
  }

  for (const id of ["filter-status", "filter-hook", "filter-text"]) {
    $(id).addEventListener("input", () => {
      state.lastList = "";
      state.older = [];
      $("older").disabled = false;
      void refresh();
    });
  }

  // Older requests come from the journal, once per click; the live list keeps polling what is in memory.
  $("older").addEventListener("click", async () => {
    const all = [...state.live, ...state.older];
    const before = all.length === 0 ? Date.now() : Math.min(...all.map((row) => row.at));
    const query = filterQuery();
    const answer = await getJson(`/requests?${query}${query ? "&" : ""}before=${before}`);
    state.older.push(...answer.requests);
    if (answer.requests.length === 0) $("older").disabled = true;
    renderRows(state.live);
  });
  $("filters").addEventListener("submit", (event) => event.preventDefault());

  // ---- the detail ----

  function fact(list, name, value) {
    if (value === undefined || value === null || value === "") return;
    list.append(el("dt", name), el("dd", value));
  }

  function table(node, record, headings) {
    const rows = Object.entries(record || {});
    node.replaceChildren();
    if (headings) {
      const tr = el("tr");
      for (const heading of headings) tr.append(el("th", heading));
      node.append(tr);
    }
    if (rows.length === 0) {
      const tr = el("tr");
      tr.append(el("td", "none"));
      node.append(tr);
    }
    for (const [name, value] of rows) {
      const tr = el("tr");
      tr.append(el("th", name), el("td", value));
      node.append(tr);
    }
  }

  function bodyText(shown) {
    if (!shown) return "(no body kept)";
    if (shown.kind === "json") return JSON.stringify(shown.value, null, 2);
    if (shown.kind === "form")
      return Object.entries(shown.value)
        .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(", ") : value}`)
        .join("\n");
    if (shown.kind === "base64") return `(not UTF-8; base64)\n${shown.value}`;
    return String(shown.value);
  }

  async function openDetail(id) {
    state.selected = id;
    state.lastList = "";
    const detail = await getJson(`/requests/${encodeURIComponent(id)}`);
    state.detail = detail;
    $("detail").hidden = false;
    $("action-result").replaceChildren();
    $("detail-title").textContent =
      `${detail.method || ""} ${detail.hook} · ${detail.status} ${detail.state}`;
    const facts = $("detail-facts");
    facts.replaceChildren();
    fact(facts, "Request id", detail.requestId);
    fact(facts, "Time", timeOf(detail.at));
    fact(facts, "Mapping", detail.mappingId);
    fact(facts, "Verification", detail.verification);
    if (detail.state === "refused") fact(facts, "Reason", detail.reason || detail.code);
    fact(facts, "What to check", detail.explanation);
    fact(facts, "Sender was told", detail.error);
    fact(facts, "Client", detail.client);
    fact(facts, "Request", detail.url && `${detail.method || ""} ${detail.url}`.trim());
    if (detail.suppressed)
      fact(
        facts,
        "Left out before it",
        `${detail.suppressed} refusal(s) from this address (at most hooks.journal.refusedPerMinute are kept)`,
      );
    fact(facts, "Outcome", detail.state === "refused" ? undefined : detail.outcome);
    fact(facts, "Duration", detail.durationMs === undefined ? undefined : `${detail.durationMs} ms`);
    fact(facts, "Replay of", detail.replayOf);
    for (const run of detail.runs || []) fact(facts, `Agent turn ${run.runId}`, describeRun(run));
    fact(facts, "Note", detail.note);
    table($("detail-headers"), detail.headers);
    table($("detail-query"), detail.query);
    $("detail-body").textContent = bodyText(detail.body);
    const events = $("detail-events");
    events.replaceChildren();
    for (const event of detail.events || []) {
      const item = el("li", `${event.event} ${event.id}`);
      if (event.outcome) item.append(" → ", el("strong", event.outcome, { class: "event-outcome" }));
      events.append(item);
    }
    if (!detail.events || detail.events.length === 0) events.append(el("li", "none"));
    const stored = detail.body !== undefined;
    for (const action of ["action-dry-run", "action-replay", "action-fixture"]) $(action).disabled = !stored;
    void showVerdicts(id, stored);
    void refresh();
  }

  /** "ok · reply text · delivery sent": a turn's status, its reply's kind, its delivery's result. */
  function describeRun(run) {
    const parts = [run.status];
    if (run.reply) parts.push(`reply ${run.reply}`);
    if (run.delivery) parts.push(`delivery ${run.delivery}`);
    return parts.join(" · ");
  }

  /** Every mapping's verdict on the stored request, from a dry run against the config in force now. */
  async function showVerdicts(id, stored) {
    const list = $("detail-verdicts");
    list.replaceChildren(el("li", stored ? "…" : "No stored request to run."));
    if (!stored) return;
    const response = await post(`/requests/${encodeURIComponent(id)}/dry-run`);
    const report = await response.json();
    if (state.selected !== id) return;
    if (!response.ok)
      return list.replaceChildren(el("li", report?.error?.message || `HTTP ${response.status}`));
    const items = report.candidates.map((candidate) => el("li", describeCandidate(candidate)));
    if (items.length === 0)
      items.push(
        el(
          "li",
          report.mappingId
            ? `mapping ${report.mappingId}`
            : "No mapping decides this hook (a direct request).",
        ),
      );
    items.push(el("li", `would answer ${report.status} now, with ${report.events.length} planned event(s)`));
    list.replaceChildren(...items);
  }

  function result(...nodes) {
    $("action-result").replaceChildren(...nodes);
  }

  function describeCandidate(candidate) {
    const verdict = candidate.matched ? "matched" : `no: ${candidate.reason || "did not match"}`;
    return `${candidate.id}: ${verdict}`;
  }

  $("action-dry-run").addEventListener("click", async () => {
    const id = state.selected;
    const response = await post(`/requests/${encodeURIComponent(id)}/dry-run`);
    const report = await response.json();
    if (!response.ok) return result(el("p", report?.error?.message || `HTTP ${response.status}`));
    const box = el("div", undefined, { id: "dry-run-report" });
    box.append(el("p", report.note, { class: "note" }));
    box.append(
      el("p", `Would answer ${report.status}${report.mappingId ? `, mapping ${report.mappingId}` : ""}.`),
    );
    if (report.candidates.length > 0) {
      box.append(el("h4", "Mapping verdicts"));
      const list = el("ul");
      for (const candidate of report.candidates) list.append(el("li", describeCandidate(candidate)));
      box.append(list);
    }
    box.append(el("h4", `Planned events (${report.events.length})`));
    const planned = el("ul", undefined, { id: "dry-run-events" });
    for (const event of report.events) {
      const item = el("li");
      item.append(el("strong", event.event), el("pre", JSON.stringify(event.payload, null, 2)));
      planned.append(item);
    }
    box.append(planned);
    for (const log of report.logs) box.append(el("p", `${log.level}: ${log.message}`, { class: "log" }));
    result(box);
  });

  $("action-replay").addEventListener("click", async () => {
    const id = state.selected;
    const response = await post(`/requests/${encodeURIComponent(id)}/replay`);
    const answer = await response.json();
    if (!response.ok) return result(el("p", answer?.error?.message || `HTTP ${response.status}`));
    const text = answer.duplicate
      ? `duplicate: nothing done (the delivery id is still remembered; answered ${answer.status})`
      : `replayed: answered ${answer.status}, new request id ${answer.requestId}`;
    result(el("p", text, { id: "replay-result" }), el("pre", JSON.stringify(answer.body, null, 2)));
    state.lastList = "";
    void refresh();
  });

  $("action-fixture").addEventListener("click", () => {
    const link = el("a", undefined, {
      href: api(`/requests/${encodeURIComponent(state.selected)}/fixture`),
      download: `${state.selected}.json5`,
    });
    document.body.append(link);
    link.click();
    link.remove();
  });

  $("action-curl").addEventListener("click", async () => {
    const response = await fetch(api(`/requests/${encodeURIComponent(state.selected)}/curl`), {
      credentials: "same-origin",
    });
    const text = await response.text();
    let copied = "Select and copy:";
    try {
      await navigator.clipboard.writeText(text);
      copied = "Copied (set HOOKS_URL and HOOKS_TOKEN before running it):";
    } catch {
      // No clipboard (an insecure origin, a denied permission): the line is shown to copy by hand.
    }
    result(el("p", copied), el("pre", text, { id: "curl-line" }));
  });

  // ---- compare ----

  $("compare").addEventListener("click", async () => {
    const [a, b] = state.ticked;
    const comparison = await getJson(`/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
    $("comparison").hidden = false;
    $("comparison-title").textContent =
      `A: ${comparison.a.hook} ${comparison.a.requestId} (${timeOf(comparison.a.at)}) · ` +
      `B: ${comparison.b.hook} ${comparison.b.requestId} (${timeOf(comparison.b.at)})`;
    const headers = $("comparison-headers");
    headers.replaceChildren();
    const head = el("tr");
    head.append(el("th", "Header"), el("th", "A"), el("th", "B"));
    headers.append(head);
    for (const change of comparison.headers) {
      const tr = el("tr");
      tr.append(el("th", change.name), el("td", change.a ?? "(absent)"), el("td", change.b ?? "(absent)"));
      headers.append(tr);
    }
    if (comparison.headers.length === 0) {
      const tr = el("tr");
      tr.append(el("td", "The headers are the same.", { colspan: "3" }));
      headers.append(tr);
    }
    const diff = $("comparison-body");
    diff.replaceChildren();
    const marks = { same: "  ", added: "+ ", removed: "- " };
    for (const part of comparison.body)
      for (const line of part.lines)
        diff.append(el("span", `${marks[part.kind]}${line}\n`, { class: part.kind }));
  });

  void refresh();
  setInterval(() => void refresh(), 1000);
})();
