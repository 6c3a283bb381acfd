/**
 * The route table of the directory API (issue 27 item 6): `/v1.0/organization`, `/v1.0/me`,
 * `/v1.0/users[/{id}[/memberOf]]`, `/v1.0/groups[/{id}[/members[/$ref | /{id}/$ref]]]`,
 * `/v1.0/applications[/{id}[/addPassword | /removePassword]]`,
 * `/v1.0/servicePrincipals[/{id}[/appRoleAssignments[/{id}] | /appRoleAssignedTo[/{id}]]]`,
 * `/v1.0/directoryObjects/{id}`, `/v1.0/directoryObjects/getByIds`.
 * Same origin, audience (mail) and error envelope as the mail API, whose `/v1.0/me/…` and
 * `/v1.0/users/{id}/…` mailbox paths stay with it (the router prefers these exact routes to the
 * mail area's wildcards). One handler opens the request (token, input) and dispatches by the raw
 * path's segments, which keep their case (ids of assignments are case-sensitive).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { checkRequestInput, eq } from '../mail/request.ts';
import { contextUrl, directoryPrincipal, send, type DirRequest } from './request.ts';
import * as users from './users.ts';
import * as groups from './groups.ts';
import * as apps from './applications.ts';
import * as sps from './principals.ts';
import { getByIds, getDirectoryObject } from './objects.ts';

type Handler = (dr: DirRequest, method: string, s: string[]) => Promise<unknown> | undefined;

const notAllowed = (method: string) => errors.mail.methodNotAllowedHere({ method });

/** `/organization`: the caller's tenant as the v1.0 `organization` resource. */
async function organization(dr: DirRequest, method: string): Promise<unknown> {
  if (method !== 'GET') throw notAllowed(method);
  const t = await dr.ctx.identity.directory.findTenant(dr.principal.tenantId);
  if (!t) throw errors.directory.dirNotFound({ id: dr.principal.tenantId });
  const org = {
    id: t.id,
    deletedDateTime: null,
    businessPhones: [],
    city: null,
    country: null,
    countryLetterCode: null,
    createdDateTime: null,
    displayName: t.displayName,
    verifiedDomains: [{ capabilities: 'Email', isDefault: true, isInitial: true, name: t.domain, type: 'Managed' }],
  };
  return send(dr, 200, { '@odata.context': contextUrl(dr, 'organization'), value: [org] });
}

const route: Record<string, Handler> = {
  organization: (dr, m, s) => (s.length === 1 ? organization(dr, m) : undefined),
  me: (dr, m, s) => {
    if (s.length === 1) return m === 'GET' ? users.getMe(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2 && eq(s[1], 'memberOf') && m === 'GET') {
      if (dr.principal.kind !== 'user') throw errors.directory.dirMeNeedsUser();
      return users.userMemberOf(dr, dr.principal.objectId);
    }
    return undefined;
  },
  users: (dr, m, s) => {
    if (s.length === 1) return m === 'GET' ? users.listUsers(dr) : m === 'POST' ? users.createUser(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2 && s[1] === '$count') return m === 'GET' ? users.countUsers(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2) return m === 'GET' ? users.getUser(dr, s[1]!) : m === 'PATCH' ? users.patchUser(dr, s[1]!) : m === 'DELETE' ? users.deleteUser(dr, s[1]!) : Promise.reject(notAllowed(m));
    if (s.length === 3 && eq(s[2], 'memberOf')) return m === 'GET' ? users.userMemberOf(dr, s[1]!) : Promise.reject(notAllowed(m));
    return undefined;
  },
  groups: (dr, m, s) => {
    if (s.length === 1) return m === 'GET' ? groups.listGroups(dr) : m === 'POST' ? groups.createGroup(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2) return m === 'GET' ? groups.getGroup(dr, s[1]!) : m === 'PATCH' ? groups.patchGroup(dr, s[1]!) : m === 'DELETE' ? groups.deleteGroup(dr, s[1]!) : Promise.reject(notAllowed(m));
    if (!eq(s[2], 'members')) return undefined;
    if (s.length === 3) return m === 'GET' ? groups.listMembers(dr, s[1]!) : Promise.reject(notAllowed(m));
    if (s.length === 4 && s[3] === '$ref') return m === 'POST' ? groups.addMember(dr, s[1]!) : Promise.reject(notAllowed(m));
    if (s.length === 5 && s[4] === '$ref') return m === 'DELETE' ? groups.removeMember(dr, s[1]!, s[3]!) : Promise.reject(notAllowed(m));
    return undefined;
  },
  applications: (dr, m, s) => {
    if (s.length === 1) return m === 'GET' ? apps.listApplications(dr) : m === 'POST' ? apps.createApplication(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2) return m === 'GET' ? apps.getApplication(dr, s[1]!) : m === 'PATCH' ? apps.patchApplication(dr, s[1]!) : m === 'DELETE' ? apps.deleteApplication(dr, s[1]!) : Promise.reject(notAllowed(m));
    const action = s[2]?.replace(/^vendor\.graph\./i, '');
    if (s.length === 3 && eq(action, 'addPassword')) return m === 'POST' ? apps.addApplicationPassword(dr, s[1]!) : Promise.reject(notAllowed(m));
    if (s.length === 3 && eq(action, 'removePassword')) return m === 'POST' ? apps.removeApplicationPassword(dr, s[1]!) : Promise.reject(notAllowed(m));
    return undefined;
  },
  directoryObjects: (dr, m, s) => {
    if (s.length !== 2) return undefined;
    if (eq(s[1], 'getByIds') || eq(s[1], 'vendor.graph.getByIds')) return m === 'POST' ? getByIds(dr) : Promise.reject(notAllowed(m));
    return m === 'GET' ? getDirectoryObject(dr, s[1]!) : Promise.reject(notAllowed(m));
  },
  servicePrincipals: (dr, m, s) => {
    if (s.length === 1) return m === 'GET' ? sps.listPrincipals(dr) : m === 'POST' ? sps.createPrincipal(dr) : Promise.reject(notAllowed(m));
    if (s.length === 2) return m === 'GET' ? sps.getPrincipal(dr, s[1]!) : m === 'DELETE' ? sps.deletePrincipal(dr, s[1]!) : Promise.reject(notAllowed(m));
    const direction = eq(s[2], 'appRoleAssignments') ? 'to' : eq(s[2], 'appRoleAssignedTo') ? 'of' : undefined;
    if (!direction) return undefined;
    if (s.length === 3) return m === 'GET' ? sps.listAssignments(dr, s[1]!, direction) : m === 'POST' ? sps.createAssignment(dr, s[1]!, direction) : Promise.reject(notAllowed(m));
    if (s.length === 4) return m === 'DELETE' ? sps.deleteAssignment(dr, s[1]!, s[3]!, direction) : Promise.reject(notAllowed(m));
    return undefined;
  },
};

/** Splits the raw path after `/v1.0/` into percent-decoded segments. @throws ApiError 400 for invalid percent-encoding */
function segmentsOf(path: string): string[] {
  try {
    return path.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
  } catch {
    throw errors.mail.segmentNotFound({ segment: path.slice(0, 100) });
  }
}

async function handle(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const raw = req.raw.url ?? req.url;
  const qi = raw.indexOf('?');
  const path = qi < 0 ? raw : raw.slice(0, qi);
  const q = new URLSearchParams(qi < 0 ? '' : raw.slice(qi + 1));
  const segs = segmentsOf(path);
  const principal = await directoryPrincipal(ctx, req);
  checkRequestInput(segs, q, req.body);
  // Options the directory does not answer are refused rather than ignored (an ignored `$search` would list everything).
  for (const k of q.keys()) if (['$expand', '$search', '$skip', '$format'].includes(k.toLowerCase())) throw errors.directory.dirUnsupportedOption({ option: k });
  const dr: DirRequest = { ctx, req, reply, principal, segs, q, path, body: req.body };
  const key = Object.keys(route).find((k) => eq(segs[0], k));
  const out = key ? route[key]!(dr, req.method.toUpperCase(), segs) : undefined;
  if (out === undefined) throw errors.mail.segmentNotFound({ segment: segs[segs.length - 1] ?? '' });
  return out;
}

/** Registers the directory routes (v1.0). */
export function registerDirectoryRoutes(app: FastifyInstance, ctx: AppContext): void {
  const urls = [
    '/v1.0/organization',
    '/v1.0/me',
    '/v1.0/me/memberOf',
    '/v1.0/users',
    '/v1.0/users/:id',
    '/v1.0/users/:id/memberOf',
    '/v1.0/groups',
    '/v1.0/groups/*',
    '/v1.0/applications',
    '/v1.0/applications/*',
    '/v1.0/directoryObjects/*',
    '/v1.0/servicePrincipals',
    '/v1.0/servicePrincipals/*',
  ];
  for (const url of urls) {
    app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url, config: { family: 'mail' } as any, handler: (req, reply) => handle(ctx, req, reply) as any });
  }
}
