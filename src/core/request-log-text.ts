/**
 * The text helpers of the request log (`request-log.ts`): redaction of secrets in URLs, bodies
 * and headers (bearer tokens, `client_secret`, `password`, tokens, codes, device codes, cookies,
 * the control key) — the one redaction routine, also used by the `debug` request line
 * (`http/answers.ts`; issue 30 rows 6 and 7) — the caller named by a bearer token (decoded, not
 * verified: display only), and header records made from Node's `rawHeaders` or a written response head.
 */
/** Bodies larger than this (bytes) are not kept; the entry says how large they were. */
export const maxLoggedBodyBytes = 8 * 1024;

const secretNames = /^(client_secret|password|access_token|refresh_token|id_token|assertion|client_assertion|code|code_verifier|device_code|key|token|secret|sig|signature)$/i;
/** Headers whose value is a URL that may carry secrets in its query or fragment (an authorization response's code or tokens). */
const urlHeaders = new Set(['location', 'content-location', 'refresh']);
const secretHeaders = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'x-vendor-control-key']);

/** Redacts secret-named fields in JSON or form text and the control key anywhere in it. */
export function redactText(text: string, controlKey: string, contentType = ''): string {
  let out = text;
  if (/json/i.test(contentType) || /^\s*[[{]/.test(text)) {
    out = out.replace(/("(?:client_secret|password|access_token|refresh_token|id_token|assertion|client_assertion|code_verifier|device_code|secret|secretText)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"');
  }
  // HTML: the hidden fields of a form_post authorization response, and secret URLs in attributes.
  if (/html/i.test(contentType) || /<input\b/i.test(out)) {
    out = out.replace(/(<input\b[^>]*?\bname="([^"]*)"[^>]*?\bvalue=")([^"]*)(")/gi, (m, head: string, name: string, _v: string, tail: string) => (secretNames.test(name) ? `${head}[redacted]${tail}` : m));
    out = out.replace(/(\b(?:href|action|src)=")([^"]*)(")/gi, (_m, head: string, url: string, tail: string) => `${head}${redactUrl(url, '')}${tail}`);
  }
  if (/x-www-form-urlencoded/i.test(contentType) || (!/json/i.test(contentType) && /^[\w.%-]+=[^&]*(&[\w.%-]+=[^&]*)*$/.test(text.trim()))) {
    out = out.replace(/(^|&)([^=&]+)=([^&]*)/g, (m, sep: string, name: string) => (secretNames.test(safeDecode(name)) ? `${sep}${name}=[redacted]` : m));
  }
  if (controlKey) out = out.split(controlKey).join('[control key]');
  return out.replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '[token]');
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** Redacts secret-named parameter values in the query and the fragment of a URL (an implicit-flow answer carries its tokens in the fragment). */
export function redactUrl(url: string, controlKey: string): string {
  const i = url.search(/[?#]/);
  if (i < 0) return controlKey ? url.split(controlKey).join('[control key]') : url;
  const params = url.slice(i + 1).replace(/(^|[&#?])([^=&#?]+)=([^&#]*)/g, (m, sep: string, name: string) => (secretNames.test(safeDecode(name)) ? `${sep}${name}=[redacted]` : m));
  return redactText(url.slice(0, i + 1) + params, controlKey, 'text/plain');
}

/** Redacts the secret-named values of a raw query string (no leading `?`); what the `debug` request line logs. */
export function redactQuery(query: string, controlKey: string): string {
  return redactUrl(`?${query}`, controlKey).slice(1);
}

/** A header record with names lower-cased and secret values redacted (the control key replaced anywhere). */
export function headerRecord(h: Record<string, unknown>, controlKey: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    const value = Array.isArray(v) ? v.join(', ') : String(v);
    if (secretHeaders.has(name)) out[name] = name === 'authorization' ? value.replace(/^(\w+)\s.*$/s, '$1 [redacted]') : '[redacted]';
    else if (urlHeaders.has(name)) out[name] = redactUrl(value, controlKey);
    else out[name] = controlKey ? value.split(controlKey).join('[control key]') : value;
  }
  return out;
}

/** `appid`/`upn` of a bearer token's payload, decoded without verification (display only). */
export function callerOf(authorization: string | undefined): { appId?: string; upn?: string } {
  if (!authorization) return {};
  const m = /^Bearer\s+[\w-]+\.([\w-]+)\.[\w-]*\s*$/i.exec(authorization);
  if (!m) return {};
  try {
    const p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    return { appId: str(p.appid) ?? str(p.azp), upn: str(p.upn) ?? str(p.preferred_username) ?? str(p.unique_name) };
  } catch {
    return {};
  }
}

/** A kept body as text for display: redacted, or a note of its size or kind. */
export function bodyText(body: unknown, contentType: string, length: number | undefined, controlKey: string): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (length !== undefined && length > maxLoggedBodyBytes) return `[${length} bytes, not kept]`;
  if (typeof body === 'string') return body.length > maxLoggedBodyBytes ? `[${body.length} characters, not kept]` : redactText(body, controlKey, contentType);
  if (Buffer.isBuffer(body)) {
    if (body.length > maxLoggedBodyBytes) return `[${body.length} bytes, not kept]`;
    return /json|text|xml|form/i.test(contentType) ? redactText(body.toString('utf8'), controlKey, contentType) : `[${body.length} bytes of ${contentType || 'binary'}]`;
  }
  return undefined;
}

/** The request headers of Node's `rawHeaders` (names lower-cased, repeated names joined with `, `). */
export function rawHeaderRecord(raw: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    out[name] = out[name] === undefined ? raw[i + 1]! : `${out[name]}, ${raw[i + 1]}`;
  }
  return out;
}

/** The headers of a response head as written (`HTTP/1.1 200 OK\r\nName: value\r\n…`). */
export function headTextRecord(head: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}


/**
 * The error code and message of a logged error answer's body, whatever the family's envelope:
 * `{"error": {"code", "message"}}` (resource manager, mail, analytics, …), `{"errorCode", "message"}`
 * (data platform) or OAuth's `{"error", "error_description"}`. Undefined when the body is not
 * JSON or names no code. The message is cut to its first line.
 */
export function errorSummary(body: string | undefined): { code: string; message?: string } | undefined {
  if (!body) return undefined;
  let v: any;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const firstLine = (m: unknown) => (typeof m === 'string' ? m.split('\n', 1)[0] : undefined);
  if (v.error && typeof v.error === 'object' && typeof v.error.code === 'string') return { code: v.error.code, message: firstLine(v.error.message) };
  if (typeof v.errorCode === 'string') return { code: v.errorCode, message: firstLine(v.message) };
  if (typeof v.error === 'string') return { code: v.error, message: firstLine(v.error_description) };
  if (typeof v.code === 'string') return { code: v.code, message: firstLine(v.message) };
  return undefined;
}
