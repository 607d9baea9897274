/** @module Which script-free page answers a GET under the base path, and what it reads from the source. */
import { compareRequests, curlLine } from "./inspector-actions.js";
import {
  comparePage,
  detailPage,
  dryRunPage,
  fixturePage,
  listPage,
  messagePage,
  type ViewContext,
} from "./inspector-html.js";
import type { InspectorFilter, InspectorSource } from "./inspector-source.js";

export interface ViewAnswer {
  status: number;
  type: string;
  body: string;
}

const HTML = "text/html; charset=utf-8";

/**
 * The relative way from the page at `rest` (the path below the base) back to `<base>/`. The list answers at the
 * base path itself too, where a relative link resolves against the base's parent: it names the last segment.
 */
export function relativeBase(base: string, rest: string): string {
  if (rest === "") return `./${base.slice(base.lastIndexOf("/") + 1)}/`;
  const depth = rest.split("/").length - 2;
  return depth <= 0 ? "./" : "../".repeat(depth);
}

function filterOf(params: URLSearchParams): InspectorFilter & { before?: number } {
  const filter: InspectorFilter = {};
  for (const name of ["status", "hook", "text"] as const) {
    const value = params.get(name);
    if (value) filter[name] = value;
  }
  const before = params.get("before");
  if (before && /^\d+$/.test(before)) filter.before = Number(before);
  return filter;
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The page for a GET at `rest`, or undefined when `rest` is not one of the pages (the API, the script's assets). */
export async function answerView(
  source: InspectorSource | undefined,
  base: string,
  rest: string,
  params: URLSearchParams,
): Promise<ViewAnswer | undefined> {
  const route = /^(?:\/?|\/compare|\/r\/([^/]+)(?:\/(dry-run|fixture))?)$/.exec(rest);
  if (!route) return undefined;
  const ctx: ViewContext = { toBase: relativeBase(base, rest), journaling: source?.journaling ?? false };
  const page = (status: number, body: string): ViewAnswer => ({ status, type: HTML, body });
  if (!source) {
    return page(
      503,
      messagePage(ctx, "Not running", "Hooks are disabled or not started: there is nothing to inspect."),
    );
  }
  const unknown = () => page(404, messagePage(ctx, "Not found", "No request with this id."));
  const notStored = () =>
    page(
      404,
      messagePage(
        ctx,
        "Not stored",
        "No stored request with this id: only accepted requests kept with their body can be run or saved.",
      ),
    );

  if (rest === "/compare") {
    const [a, b] = await Promise.all([
      source.detail(params.get("a") ?? ""),
      source.detail(params.get("b") ?? ""),
    ]);
    if (!a || !b) return page(404, messagePage(ctx, "Not found", "One of the two requests is not known."));
    return page(200, comparePage(ctx, compareRequests(a, b)));
  }
  const [, segment, action] = route;
  if (segment === undefined) {
    const filter = filterOf(params);
    const rows = await source.list(filter);
    const compareWith = params.get("a") || undefined;
    return page(200, listPage(ctx, { rows, filter, ...(compareWith ? { compareWith } : {}) }));
  }
  const id = decode(segment);
  if (id === undefined) return unknown();
  if (action === "dry-run") {
    const report = await source.dryRun(id);
    return report === undefined ? notStored() : page(200, dryRunPage(ctx, id, report));
  }
  if (action === "fixture") {
    const fixture = await source.fixture(id);
    return fixture === undefined ? notStored() : page(200, fixturePage(ctx, id, fixture));
  }
  const detail = await source.detail(id);
  if (!detail) return unknown();
  // The verdicts come from a dry run; a request without a stored body has none to show.
  const dryRun = detail.body === undefined ? undefined : await source.dryRun(detail.id);
  return page(
    200,
    detailPage(ctx, { detail, curl: curlLine(detail), ...(dryRun === undefined ? {} : { dryRun }) }),
  );
}
