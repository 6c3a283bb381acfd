/**
 * The console's HTML: an escaping tagged template ({@link html}), the page layout with its
 * landmarks and navigation, and the response headers of every console page (a strict
 * Content-Security-Policy: no remote content, only the console's own script).
 */
import type { FastifyReply } from 'fastify';

/** Markup that is already safe (built by {@link html} or sanitised). */
export class Safe {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for HTML element content and quoted attribute values. */
export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function part(v: unknown): string {
  if (v instanceof Safe) return v.value;
  if (Array.isArray(v)) return v.map(part).join('');
  if (v === undefined || v === null || v === false) return '';
  return esc(v);
}

/** Tagged template: interpolated values are escaped unless they are {@link Safe} (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Safe {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new Safe(out);
}

/** Marks trusted markup as safe (only for markup the console built or sanitised). */
export function raw(s: string): Safe {
  return new Safe(s);
}

/** The Content-Security-Policy of console pages: nothing remote, the console's own script and styles only. */
export const consoleCsp =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src data: cid:; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Base path of the console. */
export const base = '/_stratus/console';

const sections: [string, string][] = [
  ['', 'Overview'],
  ['/mail', 'Mail'],
  ['/subscriptions', 'Subscriptions'],
  ['/operations', 'Operations'],
  ['/resources', 'Resource manager'],
  ['/resource-groups', 'Resource groups'],
  ['/directory', 'Directory'],
  ['/requests', 'Requests'],
  ['/faults', 'Faults'],
  ['/world', 'World'],
];

const style = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.5rem 1rem;display:flex;gap:1.5rem;align-items:center;flex-wrap:wrap}
header a{color:#cfe0ff;text-decoration:none}header a[aria-current=page]{color:#fff;font-weight:600;text-decoration:underline}
header nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0;flex-wrap:wrap}
main{padding:1rem 1.5rem;max-width:1400px}
h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.2rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;margin-bottom:1rem}
th,td{border:1px solid #dde1e7;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f5}tr.unread td{font-weight:600}
.cols{display:grid;grid-template-columns:minmax(180px,260px) 1fr;gap:1.5rem}
.tree ul{list-style:none;padding-left:1rem;margin:0}.tree>ul{padding-left:0}
.muted{color:#667085}.bad{color:#b42318;font-weight:600}.ok{color:#067647}
form.inline{display:inline}form.inline button{white-space:nowrap;font-size:.85em}label{margin-right:.3rem}
input,select,button{font:inherit;padding:.15rem .35rem}
pre{background:#fff;border:1px solid #dde1e7;padding:.5rem;overflow:auto;white-space:pre-wrap;word-break:break-all;max-height:30rem}
.mailbody{background:#fff;border:1px solid #dde1e7;padding:1rem;overflow:auto}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.kv dt{font-weight:600}dl.kv dd{margin:0}
`;

/** A full page: header with navigation, `main` landmark with an h1 title. */
export function page(title: string, current: string, body: Safe, opts: { script?: boolean } = {}): string {
  const nav = sections.map(([p, label]) => html`<li><a href="${base + p}"${raw(p === current ? ' aria-current="page"' : '')}>${label}</a></li>`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Stratus console</title><style>${raw(style)}</style>${opts.script ? raw(`<script src="${base}/app.js" defer></script>`) : ''}</head>
<body><header><strong>Stratus console</strong><nav aria-label="Sections"><ul>${nav}</ul></nav></header>
<main id="main"><h1>${title}</h1>${body}</main></body></html>`.value;
}

/** Sends a console page with its security headers. */
export function sendPage(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', consoleCsp)
    .header('x-content-type-options', 'nosniff')
    // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts (CSRF check).
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .send(markup);
}

/** A table from a header row and rows of cells (cells are escaped unless {@link Safe}). */
export function table(caption: string, head: string[], rows: unknown[][], empty = 'Nothing here.'): Safe {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table><caption class="muted">${caption}</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table>`;
}

/** A link within the console (`path` relative to the console base; query values encoded). */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return base + path + (s ? `?${s}` : '');
}
