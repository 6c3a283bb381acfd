/**
 * The one splitter of mail resource paths (reference mail.md §2, §4, §7.1; OData URL
 * conventions §4.3, §4.5): used by the mail routes (request paths) and by the subscription
 * resource parser (mailsync). It reads every segment form a client or a link Stratus wrote
 * may hold:
 * - plain segments: `users/{id}/messages/{id}`;
 * - key syntax: `users('{id | upn}')`, `mailFolders('Inbox')`, `messages('{id}')`,
 *   `attachments('{id}')` — any `name('key')`, quoted with OData escaping (`''` is one quote),
 *   or unquoted `name(key)`; percent-encoding anywhere (`users(%27a%40b%27)`), and a `/`
 *   inside a quoted key does not split;
 * - function calls without arguments: `delta()`;
 * - the namespace qualifier `vendor.graph.` on actions and functions (`vendor.graph.move`).
 * Key syntax expands to two segments (`mailFolders('Inbox')` → `mailFolders`, `Inbox`) and a
 * call to its name, so the routes see one shape whatever the spelling. {@link keySegment}
 * writes key syntax that this splitter reads back, for every link Stratus writes.
 */
import { errors, type ApiError } from '../../core/errors/index.ts';

/** How a caller's splitter failures are raised (request paths and subscription resources answer differently). */
export interface SplitOptions {
  /** The error for a segment that is not valid percent-encoding (given the raw segment). */
  badEncoding: (segment: string) => ApiError;
  /** When given, a decoded segment holding a control character (U+0000–U+001F, U+007F) is refused with this error. */
  controlCharacter?: (segment: string) => ApiError;
}

/** Request paths of the mail routes: 400 `BadRequest` for bad percent-encoding. */
export const requestPathRules: SplitOptions = { badEncoding: (segment) => errors.mail.pathSegmentEncoding({ segment }) };

/** Subscription resources (mailsync): 400 `InvalidRequest` for bad percent-encoding and for control characters. */
export const subscriptionResourceRules: SplitOptions = {
  badEncoding: (segment) => errors.mail.resourceSegmentEncoding({ segment }),
  controlCharacter: (segment) => errors.mail.resourceSegmentControl({ segment }),
};

/** A quote at `i` in a raw (still percent-encoded) path: its length (1 for `'`, 3 for `%27`), else 0. */
function quoteAt(raw: string, i: number): number {
  if (raw[i] === "'") return 1;
  if (raw[i] === '%' && raw[i + 1] === '2' && (raw[i + 2] === '7')) return 3;
  return 0;
}

/** An opening parenthesis at `i` (`(` or `%28`): its length, else 0. */
function openAt(raw: string, i: number): number {
  if (raw[i] === '(') return 1;
  if (raw[i] === '%' && raw[i + 1] === '2' && raw[i + 2] === '8') return 3;
  return 0;
}

/**
 * Splits a raw path at `/`, except inside a quoted key (`('…')`, where `''` is an escaped
 * quote). Empty segments (`//`) are dropped.
 */
function rawSegments(path: string): string[] {
  // No quote (`'` or `%27`): no key can hold a `/`, so the path splits at every `/`.
  if (!path.includes("'") && !path.includes('%27')) return path.split('/').filter((s) => s !== '');
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < path.length; ) {
    if (quoted) {
      const q = quoteAt(path, i);
      if (q) {
        const q2 = quoteAt(path, i + q);
        if (q2) {
          cur += path.slice(i, i + q + q2);
          i += q + q2;
          continue;
        }
        quoted = false;
        cur += path.slice(i, i + q);
        i += q;
        continue;
      }
      cur += path[i++];
      continue;
    }
    const o = openAt(path, i);
    if (o && quoteAt(path, i + o)) {
      const q = quoteAt(path, i + o);
      cur += path.slice(i, i + o + q);
      i += o + q;
      quoted = true;
      continue;
    }
    if (path[i] === '/') {
      if (cur) out.push(cur);
      cur = '';
      i++;
      continue;
    }
    cur += path[i++];
  }
  if (cur) out.push(cur);
  return out;
}

const keyForm = /^([^()']+)\((?:'((?:[^']|'')*)'|([^()']*))\)$/s;

/** The namespace prefix a name may carry (`vendor.graph.`, any case). */
const vendorPrefix = 'vendor.graph.';
/** True when `s` starts with {@link vendorPrefix} in any case (no regular expression: most segments are ruled out by their length or first letter). */
const hasVendorPrefix = (s: string) => s.length >= vendorPrefix.length && (s.charCodeAt(0) | 32) === 118 && s.slice(0, vendorPrefix.length).toLowerCase() === vendorPrefix;

/**
 * Splits a mail resource path into segments (see the module comment for the forms read).
 * @param path the path without its query string (leading `/` optional)
 * @returns the segments, decoded; key syntax expanded to name + key; `name()` to name;
 *   `vendor.graph.` dropped from a plain or called name
 * @throws ApiError 400 (`opts.badEncoding`) for invalid percent-encoding, or (`opts.controlCharacter`, when given) a control character
 */
export function splitPath(path: string, opts: SplitOptions): string[] {
  const out: string[] = [];
  for (const raw of rawSegments(path)) {
    // Fast paths (issue 9): a segment without '%' decodes to itself, one without '(' is no key
    // form, and only a segment starting with 'v' can carry the `vendor.graph.` prefix.
    let s = raw;
    if (raw.includes('%')) {
      try {
        s = decodeURIComponent(raw);
      } catch {
        throw opts.badEncoding(raw);
      }
    }
    // eslint-disable-next-line no-control-regex
    if (opts.controlCharacter && /[\u0000-\u001f\u007f]/.test(s)) throw opts.controlCharacter(raw);
    const m = s.includes('(') ? keyForm.exec(s) : null;
    if (!m) {
      out.push(hasVendorPrefix(s) ? s.slice(vendorPrefix.length) : s);
      continue;
    }
    const name = hasVendorPrefix(m[1]!) ? m[1]!.slice(vendorPrefix.length) : m[1]!;
    if (m[2] !== undefined) out.push(name, m[2].replace(/''/g, "'"));
    else if (m[3]) out.push(name, m[3]);
    else out.push(name);
  }
  return out;
}

/**
 * Key syntax for a link: `name('key')` with quotes doubled (OData) and the key
 * percent-encoded (`/`, `?`, `#`, `%`, spaces, non-ASCII), so {@link splitPath} reads back
 * exactly `name`, `key`.
 */
export function keySegment(name: string, key: string): string {
  return `${name}('${encodeURIComponent(key.replace(/'/g, "''"))}')`;
}
