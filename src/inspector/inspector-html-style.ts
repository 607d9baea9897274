/** @module The stylesheet of the script-free pages, inline in each, and the hash their CSP allows it by. */
import { createHash } from "node:crypto";

export const VIEW_CSS = `body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2126; background: #fff; }
header { padding: 0.5rem 1rem; border-bottom: 1px solid #d8dde3; }
header .home { font-weight: 600; text-decoration: none; color: inherit; }
main { padding: 0.5rem 1rem 2rem; }
h1 { font-size: 1.25rem; margin: 0.5rem 0; }
h2 { font-size: 1.05rem; margin: 1.25rem 0 0.4rem; }
h3 { font-size: 0.95rem; margin: 0.9rem 0 0.3rem; }
a { color: #0b57d0; }
a[aria-current] { font-weight: 700; text-decoration: none; color: inherit; }
nav.filters, form, p.live { margin: 0.4rem 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.25rem 0.5rem; border-bottom: 1px solid #eceff3; overflow-wrap: anywhere; }
table.pairs th { width: 16rem; font-weight: 500; color: #4a525c; }
tr.status-4xx td, tr.status-5xx td { background: #fff4f2; }
pre { margin: 0; padding: 0.5rem; background: #f5f7f9; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
td pre { padding: 0.25rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0; }
dt { color: #4a525c; }
dd { margin: 0; overflow-wrap: anywhere; }
.note, .none, p.live { color: #4a525c; }
#compare-body .added { background: #e6f4ea; display: block; }
#compare-body .removed { background: #fce8e6; display: block; }
@media (prefers-color-scheme: dark) {
  body { color: #e3e6ea; background: #16191d; }
  header { border-color: #30363d; }
  a { color: #8ab4f8; }
  th, td { border-color: #262b31; }
  table.pairs th, dt, .note, .none, p.live { color: #a4acb6; }
  tr.status-4xx td, tr.status-5xx td { background: #2c1f1d; }
  pre { background: #1f2328; }
  #compare-body .added { background: #1d3325; }
  #compare-body .removed { background: #3a2221; }
}
`;

/**
 * Inline, not linked: in a sandboxed frame the browser may send the host's cookie with navigations only (a
 * stylesheet load is cross-site from the frame's opaque origin), and the host refuses it. The CSP allows this one
 * text by its hash, and no other style.
 */
export const VIEW_CSS_SOURCE = `'sha256-${createHash("sha256").update(VIEW_CSS).digest("base64")}'`;
