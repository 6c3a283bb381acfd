/**
 * Console page of fault rules (issue 12 items 1–2): lists, adds and removes rules through the
 * control plane's own JSON API (`GET/POST/DELETE /_stratus/faults`), called in-process
 * (`app.inject`, with the control key) so the page and the API cannot disagree.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { controlApi } from './inject.ts';
import { checkCsrf } from './csrf.ts';
import { href, html, page, sendPage, table } from './html.ts';

const families = ['arm', 'analytics', 'platform', 'mail', 'wopi', 'identity'];

function num(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw errors.control.notANumber({ value: v });
  return n;
}

/** The JSON rule of the add form. @throws ApiError 400 for numbers that do not parse */
export function ruleFromForm(f: Record<string, unknown>): Record<string, unknown> {
  const match: Record<string, string> = {};
  for (const k of ['family', 'method', 'path'] as const) if (typeof f[k] === 'string' && f[k] !== '') match[k] = f[k] as string;
  let effect: Record<string, unknown>;
  if (f.effect === 'delay') effect = { delayMs: num(f.delayMs) ?? 800 };
  else if (f.effect === 'reset') effect = { reset: true };
  else {
    const status = num(f.status) ?? 429;
    effect = { status, ...(status === 429 ? { retryAfterSeconds: num(f.retryAfterSeconds) ?? 2 } : {}) };
  }
  const rule: Record<string, unknown> = { match, effect, probability: num(f.probability) ?? 1 };
  const count = num(f.count);
  if (count !== undefined) rule.count = count;
  const seed = num(f.seed);
  if (seed !== undefined) rule.seed = seed;
  return rule;
}

/** Registers `/_stratus/console/faults`. */
export function registerFaultPages(app: FastifyInstance, ctx: AppContext): void {
  const api = controlApi(app, ctx);
  const back = (req: FastifyRequest, message?: string) => href('/faults', { message });

  app.get('/_stratus/console/faults', async (req, reply) => {
    const res = await api('GET', '/_stratus/faults');
    const message = (req.query as { message?: string }).message;
    let list: Record<string, unknown>[] = [];
    let note = html``;
    if (res.statusCode === 200) {
      const b = res.json() as unknown;
      list = (Array.isArray(b) ? b : ((b as { value?: unknown[] }).value ?? [])) as Record<string, unknown>[];
    } else note = html`<p class="bad">The fault API answered ${res.statusCode}: fault injection is not available in this build.</p>`;
    const rows = list.map((r) => [
      String(r.id ?? ''),
      JSON.stringify(r.match ?? {}),
      JSON.stringify(r.effect ?? {}),
      String(r.probability ?? 1),
      r.count === undefined || r.count === null ? '' : String(r.count),
      html`<form class="inline" method="post" action="${href(`/faults/${encodeURIComponent(String(r.id))}/delete`)}"><button type="submit">Delete rule ${String(r.id ?? '')}</button></form>`,
    ]);
    const form = html`<form method="post" action="${href('/faults')}" aria-labelledby="add"><h2 id="add">Add a rule</h2>
      <p><label for="family">Family</label><select id="family" name="family"><option value="">any</option>${families.map((f) => html`<option>${f}</option>`)}</select>
      <label for="method">Method</label><input id="method" name="method" size="7" placeholder="GET">
      <label for="path">Path (glob)</label><input id="path" name="path" placeholder="/subscriptions/*"></p>
      <p><label for="effect">Effect</label><select id="effect" name="effect"><option value="status">status</option><option value="delay">delay</option><option value="reset">reset connection</option></select>
      <label for="status">Status</label><select id="status" name="status"><option>429</option><option>500</option><option>503</option></select>
      <label for="retry">Retry-After (s)</label><input id="retry" name="retryAfterSeconds" size="4" value="2">
      <label for="delay">Delay (ms)</label><input id="delay" name="delayMs" size="6" value="800"></p>
      <p><label for="prob">Probability</label><input id="prob" name="probability" size="4" value="1">
      <label for="count">Count</label><input id="count" name="count" size="4">
      <label for="seed">Seed</label><input id="seed" name="seed" size="6"></p>
      <p><button type="submit">Add rule</button></p></form>`;
    const body = html`${message ? html`<p role="status">${message}</p>` : ''}${note}<h2>Rules</h2>${table('Fault rules', ['Id', 'Match', 'Effect', 'Probability', 'Count left', ''], rows, 'No fault rules.')}
      ${list.length ? html`<form method="post" action="${href('/faults/clear')}"><button type="submit">Delete all rules</button></form>` : ''}${form}`;
    return sendPage(reply, page('Faults', '/faults', body));
  });

  app.post('/_stratus/console/faults', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const res = await api('POST', '/_stratus/faults', ruleFromForm((req.body ?? {}) as Record<string, unknown>));
    const text = res.statusCode === 201 ? `Rule ${String((res.json() as { id?: unknown }).id ?? '')} added.` : `Not added: ${res.statusCode} ${res.body.slice(0, 300)}`;
    return reply.code(303).header('location', back(req, text)).send();
  });

  app.post('/_stratus/console/faults/clear', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const res = await api('DELETE', '/_stratus/faults');
    return reply.code(303).header('location', back(req, res.statusCode < 300 ? 'All rules deleted.' : `Not deleted: ${res.statusCode}`)).send();
  });

  app.post('/_stratus/console/faults/:id/delete', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    const { id } = req.params as { id: string };
    const res = await api('DELETE', `/_stratus/faults/${encodeURIComponent(id)}`);
    return reply.code(303).header('location', back(req, res.statusCode < 300 ? `Rule ${id} deleted.` : `Not deleted: ${res.statusCode}`)).send();
  });
}
