/**
 * The control key that guards the control plane (`/_stratus/*` except `GET /_stratus/health`;
 * design: "Conventions"; issue 11 item 2).
 *
 * The key comes from `STRATUS_CONTROL_KEY`, else from `<data dir>/control.key`, which is
 * generated (32 random bytes, base64url, file mode 0600) on first start. A request is
 * authorised by `Authorization: Bearer <key>` or by the console session cookie
 * ({@link consoleCookieName}), whose value is derived from the key, so it changes with it.
 * The cookie alone never authorises a state-changing request from another origin
 * ({@link fromOwnOrigin}, issue 30 row 1): a browser sends it along with requests that other
 * pages of the same site make.
 *
 * Paths are judged after {@link normalizePath} — case, repeated slashes, percent-encoding,
 * backslashes and dot segments — so no spelling of a control route reaches it without the key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Name of the file in the data folder that holds a generated key. */
export const controlKeyFileName = 'control.key';

/** Name of the console session cookie (HttpOnly, SameSite=Strict, path `/_stratus`). */
export const consoleCookieName = 'stratus_console';

/**
 * The control key: `envKey` when given (non-empty), else the one in `<dataDir>/control.key`,
 * created with mode 0600 when missing.
 * @throws Error when the data folder cannot be written.
 */
export function loadControlKey(dataDir: string, envKey?: string): string {
  if (envKey && envKey.trim() !== '') return envKey.trim();
  const file = path.join(dataDir, controlKeyFileName);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing) return existing;
  } catch {
    // not there yet
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  try {
    fs.writeFileSync(file, key + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // Another process created it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw e;
  }
  return key;
}

/** The console session cookie value for `key` (an HMAC of the key; never the key itself). */
export function consoleSessionValue(key: string): string {
  return createHmac('sha256', key).update('stratus-console-session-v1').digest('base64url');
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The path of a raw request target as a router would see it at worst: query dropped,
 * percent-decoding repeated until stable (so `%255F` → `_`), backslashes as slashes,
 * repeated slashes folded, dot segments resolved, lower case. Never throws: an invalid
 * percent-encoding is left as it is.
 */
export function normalizePath(rawUrl: string): string {
  let p = rawUrl.split(/[?#]/, 1)[0] ?? '/';
  for (let i = 0; i < 4; i++) {
    let next: string;
    try {
      next = decodeURIComponent(p);
    } catch {
      next = p.replace(/%([0-9a-f]{2})/gi, (m, h: string) => {
        const c = parseInt(h, 16);
        return c < 0x80 ? String.fromCharCode(c) : m;
      });
    }
    if (next === p) break;
    p = next;
  }
  p = p.replace(/\\/g, '/').replace(/\/{2,}/g, '/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    // Trailing dots and spaces are dropped by some routers and file systems: ". ", ".." + "%20".
    const s = seg.replace(/[\s]+$/, '');
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  return ('/' + out.join('/')).toLowerCase();
}

/** True when the (normalised) path is on the control plane. */
export function isControlPath(normalized: string): boolean {
  return normalized === '/_stratus' || normalized.startsWith('/_stratus/');
}

/** True when the request may reach a control route without the key (only the health check). */
export function isPublicControlRoute(method: string, normalized: string): boolean {
  return (method === 'GET' || method === 'HEAD') && normalized === '/_stratus/health';
}

/**
 * How the request carries the control key: `'bearer'` (`Authorization: Bearer <key>`),
 * `'cookie'` (the console session cookie) or `undefined`. Constant-time comparisons.
 */
export function controlAuthority(key: string, authorization: string | undefined, cookieHeader: string | undefined): 'bearer' | 'cookie' | undefined {
  if (authorization) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m && safeEqual(m[1]!, key)) return 'bearer';
  }
  if (cookieHeader) {
    const want = consoleSessionValue(key);
    for (const part of cookieHeader.split(';')) {
      const i = part.indexOf('=');
      if (i < 0) continue;
      if (part.slice(0, i).trim() === consoleCookieName && safeEqual(part.slice(i + 1).trim(), want)) return 'cookie';
    }
  }
  return undefined;
}

/** Whether the request carries the control key: `Authorization: Bearer <key>` or the console session cookie. */
export function hasControlKey(key: string, authorization: string | undefined, cookieHeader: string | undefined): boolean {
  return controlAuthority(key, authorization, cookieHeader) !== undefined;
}

/** True for a method that may change state (anything but GET, HEAD and OPTIONS). */
export function isStateChanging(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/**
 * Whether a request comes from one of `ownOrigins` (lower-case `scheme://host[:port]`; issue 30
 * row 1): the browser's `Sec-Fetch-Site` when sent (only `same-origin` passes: a page on another
 * port of the same host is `same-site`), else the `Origin` header, else the origin of `Referer`.
 * A request naming none of them is not.
 */
export function fromOwnOrigin(headers: { origin?: string | string[]; referer?: string | string[]; 'sec-fetch-site'?: string | string[] }, ownOrigins: readonly string[]): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return site.toLowerCase() === 'same-origin';
  let origin = typeof headers.origin === 'string' ? headers.origin : undefined;
  if (!origin && typeof headers.referer === 'string') {
    try {
      origin = new URL(headers.referer).origin;
    } catch {
      origin = undefined;
    }
  }
  const o = origin?.toLowerCase();
  return !!o && o !== 'null' && ownOrigins.includes(o);
}

/** Path of the console; `GET` of it with `?key=<control key>` is the login link the banner prints. */
export const consolePath = '/_stratus/console';

/**
 * Whether the request is the console login link: `GET /_stratus/console?key=<control key>`
 * (normalised path, exactly one `key` value, constant-time compare). The console route then
 * sets the session cookie and redirects to the console without the key in the URL.
 */
export function isConsoleLogin(key: string, method: string, normalized: string, rawUrl: string): boolean {
  if (method !== 'GET' || normalized !== consolePath) return false;
  const i = rawUrl.indexOf('?');
  if (i < 0) return false;
  const values = new URLSearchParams(rawUrl.slice(i + 1)).getAll('key');
  return values.length === 1 && safeEqual(values[0]!, key);
}
