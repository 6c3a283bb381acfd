/**
 * Fault injection (ours, issue 12 item 2; in the spirit of a chaos proxy): rules that make
 * matching API requests answer a throttling or server error in their family's envelope,
 * wait before they are served, or have their connection reset. Developers use them to
 * prove their retry logic against the official clients.
 *
 * Rules live in memory, per instance (not shared across instances), and never apply to
 * the control plane (`/_stratus/*`). Random choices come from a seeded generator per rule,
 * so a test that gives `seed` replays the same sequence of hits and misses.
 */
import { errors, withStatus, type ApiError, type Family } from './errors/index.ts';
import { newUuid } from './ids.ts';
import { seededRandom } from './random.ts';
import { globMatcher } from './glob.ts';

/** Family names a rule may match; `identity` is the identity provider, `arm` includes data share. */
export const faultFamilies = ['arm', 'analytics', 'platform', 'mail', 'wopi', 'identity'] as const;
/** One of {@link faultFamilies}. */
export type FaultFamily = (typeof faultFamilies)[number];

/** Which requests a rule applies to; every given field must match. */
export interface FaultMatch {
  family?: FaultFamily;
  /** HTTP method, case-insensitive. */
  method?: string;
  /**
   * A glob on the request's normalised path (`control-key.ts` `normalizePath`: decoded, dot segments
   * resolved, lower case; no query): `*` within a segment, `**` across, `?` one character — the
   * bounded dialect of `glob.ts`, matched in linear time; at most 256 characters.
   */
  path?: string;
}

/** What happens to a matching request. */
export type FaultEffect =
  | { status: 429; retryAfterSeconds?: number }
  | { status: 500 | 503; retryAfterSeconds?: number }
  | { delayMs: number }
  | { reset: true };

/** A rule as created by `POST /_stratus/faults`. */
export interface FaultRuleInput {
  match?: FaultMatch;
  effect: FaultEffect;
  /** Chance that a matching request is hit, 0–1 (default 1). */
  probability?: number;
  /** Hits after which the rule is removed (default: unlimited). */
  count?: number;
  /** Seed of the rule's random generator (default: random, reported back). */
  seed?: number;
}

/** A stored rule with its id and counters. */
export interface FaultRule extends Required<Pick<FaultRuleInput, 'effect' | 'probability' | 'seed'>> {
  id: string;
  match: FaultMatch;
  count: number | null;
  /** Requests the rule was applied to. */
  hits: number;
  /** Matching requests the dice spared. */
  misses: number;
  createdAt: string;
}

interface LiveRule extends FaultRule {
  test(path: string): boolean;
  next(): number;
}

/** The fault family of a request's family: data share is resource manager, oauth is identity. */
function faultFamilyOf(family: Family): FaultFamily | undefined {
  if (family === 'datashare') return 'arm';
  if (family === 'oauth') return 'identity';
  if (family === 'control') return undefined;
  return family;
}

/** The rules of one instance. */
export class FaultInjector {
  private rules: LiveRule[] = [];

  /** True when no rule exists (the request hook's fast path). */
  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** Adds a rule; returns it as stored. */
  add(input: FaultRuleInput, nowIso: string): FaultRule {
    const seed = input.seed ?? Math.floor(Math.random() * 2 ** 31);
    const match = { ...(input.match ?? {}) };
    const glob = match.path ? globMatcher(match.path) : undefined;
    const rule: LiveRule = {
      id: newUuid(),
      match,
      effect: input.effect,
      probability: input.probability ?? 1,
      count: input.count ?? null,
      seed,
      hits: 0,
      misses: 0,
      createdAt: nowIso,
      test: glob ?? (() => true),
      next: seededRandom(seed),
    };
    this.rules.push(rule);
    return this.view(rule);
  }

  /** Every rule, oldest first. */
  list(): FaultRule[] {
    return this.rules.map((r) => this.view(r));
  }

  /** Removes one rule; false when there is none with that id. */
  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== before;
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /**
   * The effect for a request, if a rule hits it: the first matching rule rolls its dice;
   * a miss lets later rules try. A rule whose `count` is spent is removed. `path` is the
   * request's normalised path; the caller has already kept the control plane out.
   */
  pick(family: Family, method: string, path: string): { rule: FaultRule; effect: FaultEffect } | undefined {
    const fam = faultFamilyOf(family);
    if (!fam) return undefined;
    for (const r of this.rules) {
      if (r.match.family && r.match.family !== fam) continue;
      if (r.match.method && r.match.method.toUpperCase() !== method.toUpperCase()) continue;
      if (!r.test(path)) continue;
      if (r.probability < 1 && r.next() >= r.probability) {
        r.misses++;
        continue;
      }
      r.hits++;
      if (r.count !== null && r.hits >= r.count) this.remove(r.id);
      return { rule: this.view(r), effect: r.effect };
    }
    return undefined;
  }

  private view(r: LiveRule): FaultRule {
    return { id: r.id, match: r.match, effect: r.effect, probability: r.probability, count: r.count, seed: r.seed, hits: r.hits, misses: r.misses, createdAt: r.createdAt };
  }
}

/**
 * The error a status effect answers with, in the words of `family` (its envelope is
 * rendered by the app): 429 with `Retry-After` (and the resource manager's remaining-reads
 * header at 0), 500 and 503 (503 with `Retry-After` when given). The platform marks them
 * retriable.
 */
export function faultError(family: Family, effect: { status: number; retryAfterSeconds?: number }): ApiError {
  const headers: Record<string, string> = {};
  if (effect.retryAfterSeconds !== undefined) headers['Retry-After'] = String(effect.retryAfterSeconds);
  if (effect.status === 429) {
    if (faultFamilyOf(family) === 'arm') headers['x-vendor-ratelimit-remaining-subscription-reads'] = '0';
    return errors[family].injectedThrottle({}, { headers, isRetriable: true });
  }
  const err = effect.status === 503 ? errors[family].injectedUnavailable({}, { headers, isRetriable: true }) : errors[family].injectedServerError({}, { headers, isRetriable: true });
  return withStatus(err, effect.status);
}
