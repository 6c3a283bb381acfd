/**
 * The data and request pools of `bench/real.ts` (issue 31), made through the API of a running
 * Stratus whose store `bench/real-seed.ts` filled with users and mailboxes:
 * - tokens: the demo service principal's and administrator's resource-manager tokens, and one
 *   mail token per seeded user (password grant), so each mail request carries its owner's;
 * - `webhooks` webhooks created with `generateUri` and `PUT` (the demo automation account and runbook);
 * - the ids of every seeded message (`GET /me/messages?$select=id`, by each owner);
 * - inbox page variants: combinations of `$filter`, `$orderby`, `$select`, `$skip`, `$top`,
 *   each (filter, orderby) pair and `$select` probed once and kept only when answered 2xx (the
 *   service refuses an `$orderby` whose property does not lead the `$filter`).
 * Pools are files of `bench/load.ts`'s format, shuffled with a fixed seed; write bodies carry
 * `{seq}` / `{bool}` (replaced per request by the load generator), so no write repeats.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PoolFile } from './load.ts';
import { rg, token } from './scenarios.ts';

/** The automation account the webhooks go into (the demo data set's) and its runbook. */
const accountPath = `${rg}/providers/Vendor.Automation/automationAccounts/stratus-automation`;
const webhookApi = 'api-version=2024-10-23';
const runbook = 'nightly-report';
/** Path of bench webhook `i`. */
const webhookPath = (i: number) => `${accountPath}/webhooks/bench-hook-${String(i).padStart(4, '0')}?${webhookApi}`;

/** A deterministic random source in [0, 1) (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Shuffles `xs` in place with `rand` (Fisher–Yates). */
function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/** Runs `fn` over `items` with at most `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (x: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** What the pools are built from. */
export interface RealData {
  /** Bearer tokens: 0 the service principal's (resource manager), 1 the administrator's (resource manager), then one mail token per user. */
  tokens: string[];
  /** Paths of the created webhooks. */
  webhooks: string[];
  /** Every seeded message: its id and the index of its owner's token. */
  messages: { id: string; token: number }[];
  /** Inbox page paths, each with its owner's token index. */
  pages: { path: string; token: number }[];
  /** (filter, orderby) pairs and selects left out because their probe was refused. */
  refused: string[];
}

/** Sizes of {@link prepare}. */
export interface RealSizes {
  webhooks: number;
  variants: number;
}

/** `fetch` that throws unless the answer's status is 2xx. @returns the parsed JSON body (undefined when empty) */
async function call(origin: string, method: string, p: string, tok: string, body?: unknown): Promise<any> {
  const res = await fetch(origin + p, { method, headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * Makes the tokens, the webhooks and the page variants, and lists the messages, on the server
 * at `origin` (seeded by `bench/real-seed.ts` with `users`, whose password is `password`).
 * @throws Error when a creation or listing is refused.
 */
export async function prepare(origin: string, users: { upn: string }[], password: string, sizes: RealSizes): Promise<RealData> {
  const tokens = [await token(origin, 'arm'), await token(origin, 'armUser')];
  const userTokens: string[] = new Array(users.length);
  await inParallel(users, 4, async (u, i) => {
    userTokens[i] = await token(origin, 'mail', { username: u.upn, password });
  });
  tokens.push(...userTokens);
  const webhooks = Array.from({ length: sizes.webhooks }, (_, i) => webhookPath(i));
  await inParallel(webhooks, 8, async (p) => {
    // A webhook is created with a URI the account generated (as the real API requires).
    const uri = (await call(origin, 'POST', `${accountPath}/webhooks/generateUri?${webhookApi}`, tokens[0]!)) as string;
    await call(origin, 'PUT', p, tokens[0]!, { properties: { runbook: { name: runbook }, isEnabled: true, uri, description: 'bench webhook' } });
  });
  const messages: RealData['messages'] = [];
  for (let u = 0; u < users.length; u++) {
    const page = await call(origin, 'GET', '/v1.0/me/messages?$select=id&$top=1000', tokens[2 + u]!);
    for (const m of page.value as { id: string }[]) messages.push({ id: m.id, token: 2 + u });
  }
  const { pages, refused } = await pageVariants(origin, tokens, users.length, sizes.variants);
  return { tokens, webhooks, messages, pages, refused };
}

/** `sizes.variants` distinct inbox pages over the users' mailboxes (see the module note). */
async function pageVariants(origin: string, tokens: string[], users: number, variants: number): Promise<{ pages: RealData['pages']; refused: string[] }> {
  const first = tokens[2]!;
  const senders = (await call(origin, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=from&$top=50', first)).value as { from?: { emailAddress?: { address?: string } } }[];
  const addresses = [...new Set(senders.map((m) => m.from?.emailAddress?.address).filter((a): a is string => !!a))].slice(0, 4);
  const since = new Date(Date.now() - 8 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const simple = ['isRead eq false', 'isRead eq true', "importance eq 'high'", 'hasAttachments eq true', ...addresses.map((a) => `from/emailAddress/address eq '${a}'`)];
  // With `$orderby`, the service wants the ordered property first in `$filter` (InefficientFilter): the date range first.
  const filters = ['', ...simple, `receivedDateTime ge ${since}`, ...simple.map((f) => `receivedDateTime ge ${since} and ${f}`)];
  const orderbys = ['', 'receivedDateTime desc', 'receivedDateTime', 'subject'];
  const selects = ['', 'subject', 'subject,from,receivedDateTime', 'id,isRead,importance', 'subject,bodyPreview,hasAttachments'];
  const skips = [0, 10, 20, 40, 80];
  const tops = [10, 25];
  const query = (o: { filter?: string; orderby?: string; select?: string; skip?: number; top?: number }) =>
    [
      o.top !== undefined ? `$top=${o.top}` : '',
      o.skip ? `$skip=${o.skip}` : '',
      o.filter ? `$filter=${encodeURIComponent(o.filter)}` : '',
      o.orderby ? `$orderby=${encodeURIComponent(o.orderby)}` : '',
      o.select ? `$select=${encodeURIComponent(o.select)}` : '',
    ]
      .filter(Boolean)
      .join('&');
  const inbox = '/v1.0/me/mailFolders/inbox/messages?';
  const refused: string[] = [];
  const ok = async (q: string, what: string) => {
    const res = await fetch(origin + inbox + q, { headers: { authorization: `Bearer ${first}` } });
    await res.arrayBuffer();
    if (res.status < 300) return true;
    refused.push(`${what} (${res.status})`);
    return false;
  };
  const pairs: [string, string][] = [];
  for (const f of filters) for (const o of orderbys) if (await ok(query({ filter: f, orderby: o, top: 1 }), `$filter=${f} $orderby=${o}`)) pairs.push([f, o]);
  const goodSelects: string[] = [];
  for (const s of selects) if (await ok(query({ select: s, top: 1 }), `$select=${s}`)) goodSelects.push(s);
  const rand = prng(31);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const seen = new Set<string>();
  const pages: RealData['pages'] = [];
  const possible = users * pairs.length * goodSelects.length * skips.length * tops.length;
  while (pages.length < Math.min(variants, possible)) {
    const u = Math.floor(rand() * users);
    const [filter, orderby] = pick(pairs);
    const q = query({ filter, orderby, select: pick(goodSelects), skip: pick(skips), top: pick(tops) });
    if (seen.has(`${u} ${q}`)) continue;
    seen.add(`${u} ${q}`);
    pages.push({ path: inbox + q, token: 2 + u });
  }
  return { pages, refused };
}

/** The pools of the five workloads, by scenario id. */
export type PoolName = 'webhooks' | 'messages' | 'pages' | 'mix';

/**
 * Writes the pool `name` into `dir` (`<name>.json`) and returns its file.
 * - `webhooks`: every webhook once, GET, alternately the service principal's and the administrator's token;
 * - `messages`: every message once, GET by its owner;
 * - `pages`: every page variant once;
 * - `mix` (`mixSize` requests): 45 % webhook GET, 45 % message GET, 5 % webhook PUT (a new
 *   description and `isEnabled` each time), 5 % message PATCH `isRead` (alternating).
 */
export function writePool(dir: string, name: PoolName, d: RealData, mixSize: number): string {
  const rand = prng(name.length * 7919);
  let requests: PoolFile['requests'];
  const hookGet = (i: number) => ({ method: 'GET', path: d.webhooks[i]!, token: i % 2 });
  const messageGet = (i: number) => ({ method: 'GET', path: `/v1.0/me/messages/${encodeURIComponent(d.messages[i]!.id)}`, token: d.messages[i]!.token });
  if (name === 'webhooks') requests = d.webhooks.map((_, i) => hookGet(i));
  else if (name === 'messages') requests = d.messages.map((_, i) => messageGet(i));
  else if (name === 'pages') requests = d.pages.map((p) => ({ method: 'GET', path: p.path, token: p.token }));
  else {
    requests = [];
    for (let k = 0; k < mixSize; k++) {
      const r = rand();
      const hook = Math.floor(rand() * d.webhooks.length);
      const message = Math.floor(rand() * d.messages.length);
      if (r < 0.45) requests.push(hookGet(hook));
      else if (r < 0.9) requests.push(messageGet(message));
      else if (r < 0.95)
        requests.push({
          method: 'PUT',
          path: d.webhooks[hook]!,
          token: hook % 2,
          body: `{"properties":{"runbook":{"name":"${runbook}"},"isEnabled":{bool},"description":"bench update {seq}"}}`,
        });
      else requests.push({ ...messageGet(message), method: 'PATCH', body: '{"isRead":{bool}}' });
    }
  }
  if (name !== 'mix') shuffle(requests, rand);
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ tokens: d.tokens, requests } satisfies PoolFile));
  return file;
}
