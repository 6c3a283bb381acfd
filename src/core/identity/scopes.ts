/**
 * Audiences and scopes of the identity provider (spec: resource-manager §5): the families a
 * token may be for, the delegated scopes each offers, how a `scope` or `resource` parameter
 * names a family (its `api://stratus/<family>` URI, an alias of `STRATUS_AUDIENCE_ALIASES`,
 * or the origin), and the per-client identifiers of ID tokens and token responses.
 */
import { createHash } from 'node:crypto';
import type { AudienceAlias } from '../../config.ts';
import type { DirectoryUser } from './directory.ts';
import { errors } from '../errors/index.ts';

/** The API families that are token audiences, written `api://stratus/<family>`. */
export const audienceFamilies = ['arm', 'analytics', 'platform', 'mail', 'wopi'] as const;
/** One of {@link audienceFamilies}. */
export type AudienceFamily = (typeof audienceFamilies)[number];

/** Delegated scopes each audience offers (the spec's names). */
export const delegatedScopes: Record<AudienceFamily, string[]> = {
  arm: ['user_impersonation'],
  analytics: ['Tenant.Read.All', 'Tenant.ReadWrite.All'],
  platform: ['Eventstream.ReadWrite.All', 'Item.ReadWrite.All'],
  // Mail, then the directory API's (same audience): reading the signed-in user, users, groups, applications.
  mail: ['Mail.Read', 'Mail.ReadWrite', 'Mail.Send', 'User.Read', 'User.Read.All', 'User.ReadWrite.All', 'Group.Read.All', 'Group.ReadWrite.All', 'Application.Read.All', 'Application.ReadWrite.All', 'AppRoleAssignment.ReadWrite.All', 'Directory.Read.All'],
  wopi: ['user_impersonation'],
};

/** Global Administrator directory role template id, carried in `wids` of tenant administrators. */
export const tenantAdminRoleTemplateId = '62e90394-69f5-4237-9190-012177145e10';

/** The audience URI of a family. */
export function audienceUri(family: AudienceFamily): string {
  return `api://stratus/${family}`;
}

/** `uri` without trailing slashes: the form aliases, scopes and `aud` values are compared in. */
export function trimSlash(uri: string): string {
  return uri.replace(/\/+$/, '');
}

/** A resolved scope list: the family, the `aud` the token carries, and the scope names. */
export interface ParsedScopes {
  audience: AudienceFamily;
  /** `aud` of the token: `api://stratus/<family>` or the alias the client named. */
  aud: string;
  names: string[];
  unknown: string[];
}

/**
 * Resolves a resource URI (v1 `resource=`, or the part of a scope before its name) to a family
 * and the `aud` to carry: `api://stratus/<family>`, an alias of `aliases` (with or without the
 * trailing slash), or `origin` (the resource manager). `undefined` when it names none.
 * @throws ApiError invalid_resource (AADSTS500011, naming `STRATUS_AUDIENCE_ALIASES`) for another
 * absolute http(s) resource.
 */
export function resolveResource(resource: string, origin: string, aliases: readonly AudienceAlias[] = []): { audience: AudienceFamily; aud: string } | undefined {
  const r = trimSlash(resource);
  const m = /^api:\/\/stratus\/([a-z]+)$/.exec(r);
  if (m && (audienceFamilies as readonly string[]).includes(m[1]!)) return { audience: m[1] as AudienceFamily, aud: audienceUri(m[1] as AudienceFamily) };
  const alias = aliases.find((a) => trimSlash(a.uri).toLowerCase() === r.toLowerCase());
  if (alias) return { audience: alias.family as AudienceFamily, aud: alias.uri };
  if (r === origin || r === origin.replace(/:443$/, '')) return { audience: 'arm', aud: audienceUri('arm') };
  // A real cloud's resource (an SDK's default scope): say which setting would accept it.
  if (/^https?:\/\/[^/]/i.test(r)) throw errors.oauth.audienceNotConfigured({ resource: r }, { family: 'oauth' });
  return undefined;
}

/**
 * Parses a requested scope list into (audience, `aud`, scope names); `undefined` when it names no
 * known audience or more than one. A scope is `<resource>/<name>` where the resource is
 * `api://stratus/<family>`, an alias (`<alias>/.default` and `<alias>//.default` both work), or the origin.
 * OpenID scopes (`openid`, `profile`, `offline_access`, `email`) are left out.
 */
export function parseScopes(scope: string, origin: string, aliases: readonly AudienceAlias[] = []): ParsedScopes | undefined {
  const parts = scope.split(/\s+/).filter(Boolean).filter((s) => !openIdScopes.includes(s));
  let found: { audience: AudienceFamily; aud: string } | undefined;
  const names: string[] = [];
  const unknown: string[] = [];
  for (const p of parts) {
    const cut = p.replace(/\/+$/, '').lastIndexOf('/');
    const name = cut >= 0 ? p.slice(cut + 1) : '';
    const res = cut > 0 && name && !name.includes(':') ? resolveResource(p.slice(0, cut), origin, aliases) : undefined;
    if (!res) {
      unknown.push(p);
      continue;
    }
    if (found && found.audience !== res.audience) return undefined;
    found ??= res;
    names.push(name);
  }
  if (!found) return undefined;
  return { ...found, names, unknown };
}

/** The `sub` of ID tokens: pairwise (differs per client for one user), 43 base64url characters. */
export function pairwiseSubject(userId: string, clientId: string): string {
  return createHash('sha256').update(`${userId}:${clientId}`).digest('base64url');
}

/** `client_info` of a token response: base64url JSON `{uid, utid}` (object id and tenant id). */
export function clientInfo(user: DirectoryUser): string {
  return Buffer.from(JSON.stringify({ uid: user.id, utid: user.tenantId })).toString('base64url');
}

/** The OpenID Connect scopes, which name no resource. */
export const openIdScopes = ['openid', 'profile', 'offline_access', 'email'];
