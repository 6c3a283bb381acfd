/**
 * The credentials of an application (issue 27 items 6–7): client secrets added by
 * `addPassword` (returned once, stored as a scrypt hash with their three-character hint) and
 * removed by `removePassword`, and certificate key credentials set by PATCH `keyCredentials`
 * (`type: AsymmetricX509Cert`, `usage: Verify`, `key` the base64 DER or PEM certificate) that
 * authenticate client assertions (`src/core/identity/assertion.ts`). Several of each per app.
 */
import { X509Certificate, createHash } from 'node:crypto';
import { errors } from '../../core/errors/index.ts';
import { hashSecret } from '../../core/identity/directory.ts';
import { isUuid, newUuid, randomToken } from '../../core/ids.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import type { Db } from './store.ts';
import { keyCredentialRows, passwordCredentials, recountCredentials } from './store.ts';

/** Most secrets and certificates an application may hold, each. */
export const maxCredentials = 20;

/** Default lifetime of a secret without `endDateTime`: two years, in milliseconds. */
const defaultSecretLifetimeMs = 2 * 365 * 86400_000;

/** An ISO date-time property of a credential (undefined when absent). @throws ApiError 400 */
function dateProp(o: Record<string, unknown>, name: string, property: string): string | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw errors.directory.dirInvalidValue({ property, resource: 'Application' });
  return new Date(Date.parse(v)).toISOString();
}

/** The `passwordCredentials` of an application as the API shows them (no secret text). */
export async function renderPasswordCredentials(db: Db, appId: string): Promise<Record<string, unknown>[]> {
  return (await passwordCredentials(db, appId)).map((c) => ({ customKeyIdentifier: null, displayName: c.display_name, endDateTime: c.end_at, hint: c.hint, keyId: c.key_id, secretText: null, startDateTime: c.start_at }));
}

/** The `keyCredentials` of an application as the API shows them (`key` is not returned). */
export async function renderKeyCredentials(db: Db, appId: string): Promise<Record<string, unknown>[]> {
  return (await keyCredentialRows(db, appId)).map((k) => ({
    customKeyIdentifier: Buffer.from(k.thumbprint, 'base64url').toString('base64'),
    displayName: k.display_name,
    endDateTime: k.end_at,
    key: null,
    keyId: k.key_id,
    startDateTime: k.start_at,
    type: k.type,
    usage: k.usage,
  }));
}

/**
 * `addPassword`: a new secret (40 random base64url characters) with its key id, hint and dates.
 * @returns the `passwordCredential` with `secretText` (the only time it is shown)
 * @throws ApiError 400 for invalid dates or too many secrets
 */
export async function addPassword(db: Db, appId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const pc = (body.passwordCredential ?? {}) as Record<string, unknown>;
  if (typeof pc !== 'object' || pc === null || Array.isArray(pc)) throw errors.directory.dirInvalidValue({ property: 'passwordCredential', resource: 'Application' });
  const displayName = pc.displayName;
  if (displayName !== undefined && displayName !== null && (typeof displayName !== 'string' || displayName.length > 256)) throw errors.directory.dirInvalidValue({ property: 'displayName', resource: 'passwordCredential' });
  const start = dateProp(pc, 'startDateTime', 'startDateTime') ?? nowIso();
  const end = dateProp(pc, 'endDateTime', 'endDateTime') ?? new Date(Date.parse(start) + defaultSecretLifetimeMs).toISOString();
  if (end <= start) throw errors.directory.dirInvalidValue({ property: 'endDateTime', resource: 'passwordCredential' });
  if ((await passwordCredentials(db, appId)).length >= maxCredentials) throw errors.directory.dirInvalidValue({ property: 'passwordCredentials', resource: 'Application' });
  const secretText = randomToken(30);
  const keyId = newUuid();
  const hint = secretText.slice(0, 3);
  await db
    .insertInto('app_password_credentials')
    .values({ key_id: keyId, app_id: appId, secret_hash: await hashSecret(secretText), hint, display_name: (displayName as string | undefined) ?? null, start_at: start, end_at: end })
    .execute();
  await recountCredentials(db, appId);
  return { customKeyIdentifier: null, displayName: displayName ?? null, endDateTime: end, hint, keyId, secretText, startDateTime: start };
}

/** `removePassword {keyId}`. @throws ApiError 400 when the application has no such secret */
export async function removePassword(db: Db, appId: string, body: Record<string, unknown>): Promise<void> {
  const keyId = body.keyId;
  if (typeof keyId !== 'string' || !isUuid(keyId)) throw errors.directory.dirInvalidValue({ property: 'keyId', resource: 'Application' });
  const r = await db.deleteFrom('app_password_credentials').where('app_id', '=', appId).where('key_id', '=', keyId.toLowerCase()).executeTakeFirst();
  if (Number(r.numDeletedRows) !== 1) throw errors.directory.dirNoPasswordCredential({ keyId });
  await recountCredentials(db, appId);
}

/** A certificate from a `key` value: base64 of the DER, or base64 of a PEM text (undefined when it is not one; also used by world files, `src/world/directory.ts`). */
export function certificateOf(key: string): X509Certificate | undefined {
  try {
    const bytes = Buffer.from(key, 'base64');
    const text = bytes.toString('latin1');
    return new X509Certificate(text.includes('-----BEGIN CERTIFICATE-----') ? text : bytes);
  } catch {
    return undefined;
  }
}

/**
 * PATCH `keyCredentials`: the array replaces the application's certificates. An entry with a
 * `keyId` of a kept certificate and no `key` keeps it (clients send back what GET showed);
 * a new entry needs `type: AsymmetricX509Cert`, `usage: Verify` and `key`.
 * @throws ApiError 400 `Request_BadRequest` naming what is wrong
 */
export async function setKeyCredentials(db: Db, appId: string, value: unknown): Promise<void> {
  if (!Array.isArray(value)) throw errors.directory.dirInvalidValue({ property: 'keyCredentials', resource: 'Application' });
  if (value.length > maxCredentials) throw errors.directory.dirKeyCredentialInvalid({ reason: `at most ${maxCredentials} certificates per application.` });
  const existing = new Map((await keyCredentialRows(db, appId)).map((k) => [k.key_id, k]));
  const rows: (typeof existing extends Map<string, infer R> ? R : never)[] = [];
  for (const raw of value) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw errors.directory.dirKeyCredentialInvalid({ reason: 'each entry must be an object.' });
    const k = raw as Record<string, unknown>;
    const keyId = typeof k.keyId === 'string' && isUuid(k.keyId) ? k.keyId.toLowerCase() : undefined;
    if ((k.key === undefined || k.key === null) && keyId && existing.has(keyId)) {
      rows.push(existing.get(keyId)!);
      continue;
    }
    if (k.type !== 'AsymmetricX509Cert') throw errors.directory.dirKeyCredentialInvalid({ reason: "type must be 'AsymmetricX509Cert'." });
    if (k.usage !== 'Verify') throw errors.directory.dirKeyCredentialInvalid({ reason: "usage must be 'Verify'." });
    if (typeof k.key !== 'string' || k.key.length > 65536) throw errors.directory.dirKeyCredentialInvalid({ reason: 'key must be the base64 encoded certificate.' });
    const cert = certificateOf(k.key);
    if (!cert) throw errors.directory.dirKeyCredentialInvalid({ reason: 'key is not an X.509 certificate.' });
    if (cert.publicKey.asymmetricKeyType !== 'rsa') throw errors.directory.dirKeyCredentialInvalid({ reason: 'the certificate must have an RSA key.' });
    const validFrom = new Date(cert.validFrom).toISOString();
    const validTo = new Date(cert.validTo).toISOString();
    const start = dateProp(k, 'startDateTime', 'startDateTime') ?? validFrom;
    const end = dateProp(k, 'endDateTime', 'endDateTime') ?? validTo;
    if (end <= start || end > validTo || start < validFrom) throw errors.directory.dirKeyCredentialInvalid({ reason: "the key credential's dates must lie within the certificate's validity." });
    if (Date.parse(end) <= nowMs()) throw errors.directory.dirKeyCredentialInvalid({ reason: 'the certificate has expired.' });
    const der = cert.raw;
    const displayName = typeof k.displayName === 'string' ? k.displayName.slice(0, 256) : `CN=${cert.subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3) ?? 'certificate'}`;
    rows.push({
      key_id: keyId && !existing.has(keyId) && !rows.some((r) => r.key_id === keyId) ? keyId : newUuid(),
      app_id: appId,
      type: 'AsymmetricX509Cert',
      usage: 'Verify',
      key_der: der.toString('base64'),
      thumbprint: createHash('sha1').update(der).digest('base64url'),
      thumbprint256: createHash('sha256').update(der).digest('base64url'),
      display_name: displayName,
      start_at: start,
      end_at: end,
    });
  }
  await db.deleteFrom('app_key_credentials').where('app_id', '=', appId).execute();
  for (const r of rows) await db.insertInto('app_key_credentials').values(r).execute();
  await recountCredentials(db, appId);
}
