/**
 * Console page of the world (issue 28 item 8): the clock (set to a time, advance or move back),
 * the snapshots (save, restore, delete), the reset, and the world export to download. Every
 * action goes through the control plane's own JSON API (`/_stratus/clock`, `/_stratus/snapshots`,
 * `/_stratus/reset`, `/_stratus/world`), called in-process (`app.inject`, with the control key),
 * so the page and the API cannot disagree; every form is behind the console's CSRF check.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { controlApi } from './inject.ts';
import { checkCsrf } from './csrf.ts';
import { href, html, page, sendPage, table } from './html.ts';

/** Registers `/_stratus/console/world` and its forms. */
export function registerWorldPages(app: FastifyInstance, ctx: AppContext): void {
  const api = controlApi(app, ctx);
  const back = (message: string) => href('/world', { message });
  const outcome = (res: { statusCode: number; body: string }, ok: string) => (res.statusCode < 300 ? ok : `Not done: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const field = (req: { body?: unknown }, name: string) => {
    const v = ((req.body ?? {}) as Record<string, unknown>)[name];
    return typeof v === 'string' ? v.trim() : '';
  };

  app.get('/_stratus/console/world', async (req, reply) => {
    const message = (req.query as { message?: string }).message;
    const clock = (await api('GET', '/_stratus/clock')).json() as { now: string; offsetMs: number };
    const snaps = ((await api('GET', '/_stratus/snapshots')).json() as { value?: { name: string; createdAt: string; clock: string | null; rows: number }[] }).value ?? [];
    const rows = snaps.map((s) => [
      s.name,
      s.createdAt,
      s.clock ?? 'machine clock',
      String(s.rows),
      html`<form class="inline" method="post" action="${href(`/world/snapshots/${encodeURIComponent(s.name)}/restore`)}"><button type="submit">Restore ${s.name}</button></form>
        <form class="inline" method="post" action="${href(`/world/snapshots/${encodeURIComponent(s.name)}/delete`)}"><button type="submit">Delete ${s.name}</button></form>`,
    ]);
    const body = html`${message ? html`<p role="status">${message}</p>` : ''}
      <h2>Clock</h2><p>Stratus time <strong>${clock.now}</strong> (offset ${String(Math.round(clock.offsetMs / 1000))} s from the machine clock; shared by every instance).</p>
      <form method="post" action="${href('/world/clock')}" aria-label="Set the clock"><p><label for="now">Set to (ISO 8601 with zone)</label><input id="now" name="now" size="26" value="${clock.now}"> <button type="submit">Set the clock</button></p></form>
      <form method="post" action="${href('/world/clock')}" aria-label="Advance the clock"><p><label for="adv">Advance by seconds (negative moves back)</label><input id="adv" name="advanceSeconds" size="8" value="3600"> <button type="submit">Advance the clock</button></p></form>
      <h2>Snapshots</h2>${table('Snapshots', ['Name', 'Saved', 'Clock', 'Rows', ''], rows, 'No snapshots.')}
      <form method="post" action="${href('/world/snapshots')}" aria-label="Save a snapshot"><p><label for="name">Name</label><input id="name" name="name" size="24" placeholder="before-test"> <button type="submit">Save a snapshot</button></p></form>
      <h2>Reset</h2><form method="post" action="${href('/world/reset')}"><p><button type="submit">Reset to the world the server started with</button> (rows, clock, fault rules, rate-limit windows, caches)</p></form>
      <h2>Export</h2><p>Download the world: <a href="${href('/world/export.yaml')}">world.yaml</a>, <a href="${href('/world/export.json')}">world.json</a> (docs/worlds.md says what it covers).</p>`;
    return sendPage(reply, page('World', '/world', body));
  });

  app.get('/_stratus/console/world/export.:format', async (req, reply) => {
    const format = (req.params as { format: string }).format === 'json' ? 'json' : 'yaml';
    const res = await api('GET', `/_stratus/world?format=${format}`);
    return reply
      .code(res.statusCode)
      .header('content-type', String(res.headers['content-type'] ?? 'application/octet-stream'))
      .header('content-disposition', `attachment; filename="world.${format}"`)
      .header('cache-control', 'no-store')
      .send(res.rawPayload);
  });

  app.post('/_stratus/console/world/clock', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const now = field(req, 'now');
    const adv = field(req, 'advanceSeconds');
    let payload: Record<string, unknown>;
    if (adv !== '') {
      const n = Number(adv);
      if (!Number.isFinite(n)) throw errors.control.notANumber({ value: adv });
      payload = { advanceSeconds: n };
    } else payload = { now };
    const res = await api('POST', '/_stratus/clock', payload);
    return reply.code(303).header('location', back(outcome(res, `Clock moved: ${res.statusCode < 300 ? (res.json() as { now: string }).now : ''}`))).send();
  });

  app.post('/_stratus/console/world/snapshots', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const name = field(req, 'name');
    const res = await api('POST', '/_stratus/snapshots', { name });
    return reply.code(303).header('location', back(outcome(res, `Snapshot ${name} saved.`))).send();
  });

  app.post('/_stratus/console/world/snapshots/:name/:action', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const { name, action } = req.params as { name: string; action: string };
    const res = action === 'restore' ? await api('POST', `/_stratus/snapshots/${encodeURIComponent(name)}/restore`) : await api('DELETE', `/_stratus/snapshots/${encodeURIComponent(name)}`);
    return reply.code(303).header('location', back(outcome(res, `Snapshot ${name} ${action === 'restore' ? 'restored' : 'deleted'}.`))).send();
  });

  app.post('/_stratus/console/world/reset', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const res = await api('POST', '/_stratus/reset');
    return reply.code(303).header('location', back(outcome(res, 'Reset to the world the server started with.'))).send();
  });
}
