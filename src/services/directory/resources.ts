/**
 * The resource service principals (issue 27 item 6): one per Stratus API family, in every
 * tenant, with the application roles (application permissions) a client can be granted on it
 * through `appRoleAssignments`. Their ids are stable (derived from the family and the role
 * name: `docs/directory-app-roles.md` lists them); an assignment is stored as a row of
 * `app_role_grants` (client id, family, role value), which is what client-credentials tokens
 * carry in `roles`.
 */
import { stableUuid } from '../../core/ids.ts';
import { audienceFamilies, audienceUri, type AudienceFamily } from '../../core/identity/scopes.ts';

/** An application role of a resource service principal. */
export interface ResourceAppRole {
  id: string;
  value: string;
  displayName: string;
  description: string;
}

/** The resource service principal of one API family. */
export interface ResourcePrincipal {
  family: AudienceFamily;
  /** Object id of the service principal (the same in every tenant). */
  id: string;
  appId: string;
  displayName: string;
  appRoles: ResourceAppRole[];
}

/** Application roles each family offers, with what they allow. */
const rolesByFamily: Record<AudienceFamily, [string, string][]> = {
  arm: [],
  analytics: [
    ['Tenant.Read.All', 'Read all analytics content of the tenant'],
    ['Tenant.ReadWrite.All', 'Read and write all analytics content of the tenant'],
  ],
  platform: [
    ['Item.Read.All', 'Read all items of the data platform'],
    ['Item.ReadWrite.All', 'Read and write all items of the data platform'],
    ['Eventstream.ReadWrite.All', 'Read and write all eventstreams'],
  ],
  mail: [
    ['Mail.ReadBasic.All', 'Read basic mail in all mailboxes'],
    ['Mail.Read', 'Read mail in all mailboxes'],
    ['Mail.ReadWrite', 'Read and write mail in all mailboxes'],
    ['Mail.Send', 'Send mail as any user'],
    ['User.Read.All', 'Read all users'],
    ['User.ReadWrite.All', 'Read and write all users'],
    ['Group.Read.All', 'Read all groups'],
    ['Group.ReadWrite.All', 'Read and write all groups'],
    ['Application.Read.All', 'Read all applications and service principals'],
    ['Application.ReadWrite.All', 'Read and write all applications and service principals'],
    ['AppRoleAssignment.ReadWrite.All', 'Manage app permission grants and app role assignments'],
    ['Directory.Read.All', 'Read directory data'],
    ['Directory.ReadWrite.All', 'Read and write directory data'],
  ],
  wopi: [],
};

const names: Record<AudienceFamily, string> = {
  arm: 'Stratus Resource Manager',
  analytics: 'Stratus Analytics API',
  platform: 'Stratus Data Platform API',
  mail: 'Stratus Mail and Directory API',
  wopi: 'Stratus WOPI',
};

/** The resource service principals, by family (stable ids). */
export const resourcePrincipals: ResourcePrincipal[] = audienceFamilies.map((family) => ({
  family,
  id: stableUuid('stratus-resource-sp', family),
  appId: stableUuid('stratus-resource-app', family),
  displayName: names[family],
  appRoles: rolesByFamily[family].map(([value, description]) => ({ id: stableUuid('stratus-app-role', family, value), value, displayName: description, description: `Allows the app to ${description.toLowerCase()} without a signed-in user.` })),
}));

/** The resource service principal with this object id or appId (case-insensitive). */
export function resourcePrincipal(idOrAppId: string): ResourcePrincipal | undefined {
  const v = idOrAppId.toLowerCase();
  return resourcePrincipals.find((r) => r.id === v || r.appId === v);
}

/** The resource service principal of a family. */
export function resourceOfFamily(family: string): ResourcePrincipal | undefined {
  return resourcePrincipals.find((r) => r.family === family);
}

/** The `servicePrincipal` resource of a resource service principal. */
export function renderResourcePrincipal(r: ResourcePrincipal, tenantId: string): Record<string, unknown> {
  return {
    id: r.id,
    deletedDateTime: null,
    accountEnabled: true,
    appDisplayName: r.displayName,
    appId: r.appId,
    appOwnerOrganizationId: tenantId,
    appRoleAssignmentRequired: false,
    appRoles: r.appRoles.map((a) => ({ allowedMemberTypes: ['Application'], description: a.description, displayName: a.displayName, id: a.id, isEnabled: true, origin: 'Application', value: a.value })),
    displayName: r.displayName,
    servicePrincipalNames: [audienceUri(r.family), r.appId],
    servicePrincipalType: 'Application',
    signInAudience: null,
    tags: [],
    keyCredentials: [],
    passwordCredentials: [],
    replyUrls: [],
  };
}
