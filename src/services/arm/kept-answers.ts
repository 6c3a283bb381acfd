/**
 * Kept answers of the resource manager's `keep` operations (issue 9: a webhook GET at the
 * framework's speed; issue 31: kept across writes of other keyed rows), used by `armRoute`
 * (`kernel.ts`).
 *
 * By caller (tenant and object id), method and URL as sent; at most 16 MiB in all, none over
 * 32 KiB. An answer is used for a caller whose token is known valid (the identity provider's
 * kept verification: whole token, `exp`, origin) while no cache area changed since it was made
 * (the hub's epoch, brought up to date with other instances first); the gateway's checks passed
 * when it was made and depend on nothing else, so a kept answer skips them and the handler.
 *
 * A handler that names every keyed row it reads ({@link keptWhileKeyUnchanged}; the webhook GET
 * names its webhook) makes an answer that is also used, and kept, across writes of the table's
 * other rows: while no area changed and none of its keys was dropped since it was started
 * (`core/cache-keyed.ts`). Before, in the 90/10 mix a webhook `PUT` every 1–2 ms ended every
 * kept webhook answer (bench/README.md, sixth pass).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { CacheHub, KeyDependency } from '../../core/cache.ts';
import { knownPrincipal } from '../../core/auth.ts';
import { KeyInterner } from '../../core/keys.ts';

/** What a request whose answer may be kept started at ({@link KeptAnswers.begin}). */
const startKey = Symbol('stratus.armKept');
/** The keyed rows the request's handler named ({@link keptWhileKeyUnchanged}). */
const namedKey = Symbol('stratus.armKeptDeps');

interface Start {
  key: string;
  epoch: number;
  areaEpoch: number;
  /** The drop tickets of the keyed tables' caches at the start (`KeyedDependencies.tickets`). */
  tickets: Map<string, number>;
}
type Carrier = { [startKey]?: Start; [namedKey]?: { cache: string; key: string }[] };

/** A kept 200 answer of a `keep` operation. */
interface KeptAnswer {
  /** The answer's UTF-8 bytes (Node sends a buffer as it is; a string it joins to the head and encodes anew every time). */
  body: Buffer;
  contentType: string;
  /** The cache epoch the answer was made at (valid while the hub's epoch is still this). */
  epoch: number;
  /** The hub's area epoch then (`CacheHub.areaEpoch`). */
  areaEpoch: number;
  /** When the handler named every keyed row it read: those keys, with their drop tickets. */
  deps?: KeyDependency[];
}

/**
 * Tells the gateway that the answer of this `keep` request depends, beyond whole cache areas,
 * on one row of a keyed table: the key `key` of the named cache `cache` (the table's
 * `keyed.cache` in `cache-tables.ts`). Call it for every keyed row the handler reads, or for
 * none. No effect on other requests.
 */
export function keptWhileKeyUnchanged(req: FastifyRequest, cache: string, key: string): void {
  const carrier = req as Carrier;
  if (carrier[startKey] === undefined) return;
  (carrier[namedKey] ??= []).push({ cache, key });
}

/** The kept answers of one app (see the module note). */
export class KeptAnswers {
  private readonly answers = new LRUCache<string, KeptAnswer>({ maxSize: 16 * 1024 * 1024, sizeCalculation: (a) => a.body.length + 64 });
  /** The keys, made once (`core/keys.ts`). */
  private readonly keys = new KeyInterner('|');
  /** Answers served (tests, diagnostics): all, and those made before a write of another row of a keyed table they read. */
  readonly served = { all: 0, acrossKeyedWrites: 0 };

  /** The key of the request's answer: its caller by a token verified before, method and URL; undefined when the token is not a known one. */
  keyOf(req: FastifyRequest, ctx: AppContext): string | undefined {
    const p = knownPrincipal(req, ctx.identity, 'arm');
    return p && this.keys.key(p.tenantId, p.objectId, req.method, req.raw.url ?? req.url);
  }

  /** The answer kept under `key` when it is still current for `hub` (synced first by the caller). */
  get(key: string, hub: CacheHub): KeptAnswer | undefined {
    const a = this.answers.get(key);
    if (a === undefined) return undefined;
    if (a.epoch === hub.epoch) {
      this.served.all++;
      return a;
    }
    if (a.deps === undefined || !hub.keyed.current(a.areaEpoch, hub.areaEpoch, a.deps)) return undefined;
    this.served.all++;
    this.served.acrossKeyedWrites++;
    return a;
  }

  /** Records, on a request not answered from the cache, what its answer would be kept under and what it starts from. */
  begin(req: FastifyRequest, key: string, hub: CacheHub): void {
    (req as Carrier)[startKey] = { key, epoch: hub.epoch, areaEpoch: hub.areaEpoch, tickets: hub.keyed.tickets() };
  }

  /**
   * After the handler of a request {@link begin} saw: keeps its 200 answer `out` when nothing
   * changed while it was made (the epoch), or, for an answer whose keyed rows are named, when no
   * area changed and none of those rows was dropped since its start (this instance's own writes
   * are checked when it is used). @returns the bytes kept (to send instead of `out`), else undefined
   */
  finish(req: FastifyRequest, reply: FastifyReply, hub: CacheHub, out: unknown): Buffer | undefined {
    const k = (req as Carrier)[startKey];
    if (k === undefined || reply.statusCode !== 200) return undefined;
    const deps = startDeps(k.tickets, (req as Carrier)[namedKey]);
    if (hub.epoch !== k.epoch && !(deps !== undefined && hub.keyed.unchanged(k.areaEpoch, hub.areaEpoch, deps))) return undefined;
    const text = typeof out === 'string' ? out : out !== null && typeof out === 'object' ? JSON.stringify(out) : undefined;
    const contentType = reply.getHeader('content-type') ?? (typeof out === 'string' ? undefined : 'application/json; charset=utf-8');
    if (text === undefined || typeof contentType !== 'string') return undefined;
    const body = Buffer.from(text, 'utf8');
    if (body.length <= 32 * 1024) this.answers.set(k.key, { body, contentType, epoch: k.epoch, areaEpoch: k.areaEpoch, deps });
    reply.type(contentType);
    return body;
  }
}

/**
 * The keyed rows a request named with the drop tickets of their caches at its start; undefined
 * when it named none, or one of a cache that had none then.
 */
function startDeps(tickets: Map<string, number>, named: readonly { cache: string; key: string }[] | undefined): KeyDependency[] | undefined {
  if (named === undefined) return undefined;
  const out: KeyDependency[] = [];
  for (const d of named) {
    const ticket = tickets.get(d.cache);
    if (ticket === undefined) return undefined;
    out.push({ cache: d.cache, key: d.key, ticket });
  }
  return out;
}

const byApp = new WeakMap<AppContext, KeptAnswers>();

/** The app's kept answers (made on first use). */
export function keptAnswersOf(ctx: AppContext): KeptAnswers {
  let k = byApp.get(ctx);
  if (!k) byApp.set(ctx, (k = new KeptAnswers()));
  return k;
}

/** How many kept answers the app served ({@link KeptAnswers.served}; tests, diagnostics): zeros before any was looked up. */
export function keptAnswersServed(ctx: AppContext): { all: number; acrossKeyedWrites: number } {
  return { ...(byApp.get(ctx)?.served ?? { all: 0, acrossKeyedWrites: 0 }) };
}
