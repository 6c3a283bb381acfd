/**
 * The request log in the console (issue 12 item 1, "Requests"): `GET /_stratus/requests`
 * (JSON; query `family`, `status` (`403` or `4xx`), `q`, `limit` 1–N), the page with its
 * filter form (works without JavaScript), a live feed of new entries as server-sent events
 * (`/_stratus/console/requests/events`, also at `/_stratus/requests/events` for scripts; same
 * filters; `event: request`, `data:` the entry without headers and bodies) and a detail view with the redacted
 * headers and bodies.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import type { RequestEntry, RequestFilter } from '../../core/request-log.ts';
import { errorSummary } from '../../core/request-log-text.ts';
import { href, html, page, sendPage, table, type Safe } from './html.ts';

const families = ['arm', 'datashare', 'analytics', 'platform', 'mail', 'wopi', 'oauth', 'control'];

/** Query of the JSON list and the page. */
const RequestQuery = Type.Object({
  family: Type.Optional(Type.String({ maxLength: 32 })),
  status: Type.Optional(Type.String({ pattern: '^([1-5][0-9][0-9]|[1-5]xx|[1-5]XX)?$' })),
  q: Type.Optional(Type.String({ maxLength: 500 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
});
type RequestQueryT = Static<typeof RequestQuery>;

function filterOf(q: RequestQueryT, fallbackLimit: number): RequestFilter {
  return { family: q.family || undefined, status: q.status || undefined, q: q.q || undefined, limit: q.limit ?? fallbackLimit };
}

function caller(e: RequestEntry): string {
  return [e.upn, e.appId].filter(Boolean).join(' / ');
}

function row(e: RequestEntry): unknown[] {
  return [e.time, e.family, e.method, html`<a href="${href(`/requests/${encodeURIComponent(e.id)}`)}">${e.url}</a>`, html`<span class="${e.status >= 400 ? 'bad' : 'ok'}">${e.status}</span>`, e.durationMs, caller(e), e.id];
}

/** Registers `GET /_stratus/requests` and the request pages. */
export function registerRequestPages(app: FastifyInstance, ctx: AppContext): void {
  const log = ctx.requestLog;
  const streams = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const s of streams) s.end();
  });

  app.get('/_stratus/requests', { schema: { querystring: RequestQuery } }, async (req) => {
    const q = req.query as RequestQueryT;
    return { size: log.size, value: log.list(filterOf(q, log.size)) };
  });

  app.get('/_stratus/console/requests', { schema: { querystring: RequestQuery } }, async (req, reply) => {
    const q = req.query as RequestQueryT;
    const entries = log.list(filterOf(q, 200));
    const form = html`<form method="get" action="${href('/requests')}" role="search" id="request-filter">
      <label for="f-family">Family</label><select id="f-family" name="family"><option value="">any</option>${families.map((f) => html`<option value="${f}"${q.family === f ? html` selected` : ''}>${f}</option>`)}</select>
      <label for="f-status">Status</label><input id="f-status" name="status" size="4" placeholder="403, 4xx" value="${q.status ?? ''}">
      <label for="f-q">Text</label><input id="f-q" name="q" type="search" value="${q.q ?? ''}">
      <button type="submit">Filter</button></form>`;
    const body = html`<p class="muted">The last ${log.size} requests, newest first (in memory; the console's own requests are not recorded). New requests appear live when JavaScript is on; otherwise reload.</p>${form}
      <p id="live-status" class="muted" aria-live="polite"></p>
      ${table('Requests', ['Time', 'Family', 'Method', 'URL', 'Status', 'ms', 'Caller', 'Request id'], entries.map(row), 'No requests recorded (yet).')}`;
    return sendPage(reply, page('Requests', '/requests', body, { script: true }));
  });

  // The live feed: for the console page, and at /_stratus/requests/events for scripts and the CLI.
  const events = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as RequestQueryT;
    const f = filterOf(q, 1);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-content-type-options': 'nosniff' });
    res.write(': stratus request log\n\n');
    streams.add(res);
    const unsubscribe = log.subscribe((e) => {
      if (f.family && e.family !== f.family) return;
      if (f.status && !(/^\dxx$/i.test(f.status) ? Math.floor(e.status / 100) === Number(f.status[0]) : String(e.status) === f.status)) return;
      if (f.q && !`${e.method} ${e.url} ${e.appId ?? ''} ${e.upn ?? ''} ${e.id} ${e.status}`.toLowerCase().includes(f.q.toLowerCase())) return;
      const { requestHeaders: _h, responseHeaders: _r, requestBody: _b, responseBody: _s, ...summary } = e;
      // An error answer carries its code and message (from the logged body), for `stratus requests --follow`.
      const error = e.status >= 400 ? errorSummary(e.responseBody) : undefined;
      if (error) Object.assign(summary, { error });
      res.write(`id: ${e.seq}\nevent: request\ndata: ${JSON.stringify(summary)}\n\n`);
    });
    const ping = setInterval(() => res.write(': ping\n\n'), 25_000);
    ping.unref();
    req.raw.on('close', () => {
      clearInterval(ping);
      unsubscribe();
      streams.delete(res);
    });
  };
  app.get('/_stratus/console/requests/events', { schema: { querystring: RequestQuery } }, events);
  app.get('/_stratus/requests/events', { schema: { querystring: RequestQuery } }, events);

  app.get('/_stratus/console/requests/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const e = log.get(id);
    if (!e) throw errors.control.requestNotInLog({ id });
    const headers = (h: Record<string, string>): Safe => table('Headers', ['Name', 'Value'], Object.entries(h).map(([k, v]) => [k, v]), 'None.');
    const body = html`<p><a href="${href('/requests')}">Back to the request log</a></p>
      <dl class="kv"><dt>Time</dt><dd>${e.time}</dd><dt>Family</dt><dd>${e.family}</dd><dt>Method</dt><dd>${e.method}</dd><dt>URL</dt><dd>${e.url}</dd>
      <dt>Status</dt><dd>${e.status}</dd><dt>Duration</dt><dd>${e.durationMs} ms</dd><dt>Caller</dt><dd>${caller(e) || '(none)'}</dd><dt>Request id</dt><dd>${e.id}</dd></dl>
      <h2>Request headers</h2>${headers(e.requestHeaders)}<h2>Request body</h2><pre>${e.requestBody ?? '(none)'}</pre>
      <h2>Response headers</h2>${headers(e.responseHeaders)}<h2>Response body</h2><pre>${e.responseBody ?? '(none)'}</pre>`;
    return sendPage(reply, page(`${e.method} ${e.path}`, '/requests', body));
  });
}

/** The console's script: the live request feed (progressive enhancement of the request table). */
export const consoleScript = `'use strict';
(function () {
  var form = document.getElementById('request-filter');
  var table = document.querySelector('main table tbody');
  var status = document.getElementById('live-status');
  if (!form || !window.EventSource) return;
  var params = new URLSearchParams(new FormData(form));
  var es = new EventSource('${'/_stratus/console/requests/events'}?' + params.toString());
  es.addEventListener('open', function () { status.textContent = 'Live: new requests appear at the top.'; });
  es.addEventListener('error', function () { status.textContent = 'Live feed interrupted; reconnecting.'; });
  es.addEventListener('request', function (ev) {
    var e = JSON.parse(ev.data);
    if (!table) {
      var empty = document.querySelector('main p.muted:last-of-type');
      var t = document.createElement('table');
      t.innerHTML = '<thead><tr><th scope="col">Time</th><th scope="col">Family</th><th scope="col">Method</th><th scope="col">URL</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Caller</th><th scope="col">Request id</th></tr></thead><tbody></tbody>';
      (empty && empty.parentNode ? empty.parentNode : document.querySelector('main')).appendChild(t);
      if (empty && empty.textContent.indexOf('No requests') === 0) empty.remove();
      table = t.querySelector('tbody');
    }
    var tr = document.createElement('tr');
    var cells = [e.time, e.family, e.method, null, String(e.status), String(e.durationMs), [e.upn, e.appId].filter(Boolean).join(' / '), e.id];
    cells.forEach(function (c, i) {
      var td = document.createElement('td');
      if (i === 3) {
        var a = document.createElement('a');
        a.href = '/_stratus/console/requests/' + encodeURIComponent(e.id);
        a.textContent = e.url;
        td.appendChild(a);
      } else if (i === 4) {
        var s = document.createElement('span');
        s.className = e.status >= 400 ? 'bad' : 'ok';
        s.textContent = c;
        td.appendChild(s);
      } else td.textContent = c;
      tr.appendChild(td);
    });
    table.insertBefore(tr, table.firstChild);
  });
})();
`;
