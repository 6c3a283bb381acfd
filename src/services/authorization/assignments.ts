/**
 * What the role-assignment operations mean (api-version 2022-04-01; reference
 * resource-manager-base §7.1, §8): create (the name a GUID; 201, 200 when the same assignment
 * is PUT again; 409 `RoleAssignmentExists` for the same principal, role and scope under another
 * name), get, delete (200 with the assignment, 204 when absent), the list at a scope with
 * `$filter` (`atScope()`, `principalId eq`, `assignedTo()`) and `$skipToken` paging. The by-id
 * forms (`/{roleAssignmentId}`) are the same paths. The gateway's authorization reads exactly
 * these rows (`arm/rbac.ts`): a write here decides the very next request on every instance.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { errors } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { armReader, authorizationFailed, type ArmCall } from '../arm/gateway.ts';
import { queryValue, skipToken } from '../arm/input.ts';
import { principalIdsFor, roleDefinitionOf, scopeAncestors } from '../arm/rbac.ts';
import { roleStore, scopeKey, type RoleAssignmentRecord } from '../arm/role-store.ts';
import { principalTypeOf, type PrincipalType } from './principals.ts';
import { roleWrite } from './role-write.ts';
import { assignmentFilter, roleGuidOf, type RoleResolved } from './role-scope.ts';

/** A role operation's call: the gateway's, with the resolved role scope. */
export type RoleCall = ArmCall & { resolved: RoleResolved };

/** The RBAC actions of role assignments (the real provider's). */
export const assignmentActions = {
  read: 'Vendor.Authorization/roleAssignments/read',
  write: 'Vendor.Authorization/roleAssignments/write',
  delete: 'Vendor.Authorization/roleAssignments/delete',
} as const;

/** Assignments per list page. */
export const assignmentPageSize = 100;

const principalTypes = ['User', 'Group', 'ServicePrincipal', 'ForeignGroup', 'Device'];

/** The JSON of an assignment (2022-04-01 `RoleAssignment`; the role definition id in its tenant-level form, as the published example answers). */
export function assignmentJson(a: RoleAssignmentRecord) {
  const scope = a.scope === '/' ? '' : a.scope;
  return {
    properties: {
      roleDefinitionId: `/providers/Vendor.Authorization/roleDefinitions/${a.roleDefinitionId}`,
      principalId: a.principalId,
      principalType: a.principalType,
      scope: a.scope,
      condition: a.condition,
      conditionVersion: a.conditionVersion,
      createdOn: a.createdOn,
      updatedOn: a.updatedOn,
      createdBy: a.createdBy,
      updatedBy: a.updatedBy,
      delegatedManagedIdentityResourceId: null,
      description: a.description,
    },
    id: `${scope}/providers/Vendor.Authorization/roleAssignments/${a.id}`,
    type: 'Vendor.Authorization/roleAssignments',
    name: a.id,
  };
}

const nameOf = (req: FastifyRequest) => (req.params as Record<string, string>).roleAssignmentName!;

/** A string member of `properties` (absent or null → undefined). @throws 400 `InvalidRequestContent` for another type, a longer text or a control character (tab and line ends allowed). */
function optionalString(props: Record<string, unknown>, key: string, max: number): string | undefined {
  const v = props[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(v)) {
    throw errors.arm.invalidBody({ message: `The property 'properties.${key}' must be a string of at most ${max} characters without control characters.` }, { target: `properties.${key}` });
  }
  return v;
}

/** The role-assignment handlers of `role-routes.ts`. */
export function assignmentRules(ctx: AppContext) {
  const arm = armReader(ctx);

  /** The assignment of the path when it exists in the caller's tenant at the path's scope. */
  const find = async (req: FastifyRequest, call: RoleCall) => {
    const name = nameOf(req);
    if (!isUuid(name)) return undefined;
    const a = await roleStore.assignment(ctx.store.db, name);
    return a && a.tenantId === call.principal.tenantId && scopeKey(a.scope) === scopeKey(call.resolved.role.scope) ? a : undefined;
  };

  return {
    /** PUT: 201 created, 200 when the same assignment is PUT again (its description and condition updated). */
    async put(req: FastifyRequest, reply: FastifyReply, call: RoleCall) {
      const name = nameOf(req);
      if (!isUuid(name)) throw errors.arm.invalidRoleAssignmentName({ name });
      const body = req.body as { properties?: Record<string, unknown> } | undefined;
      if (body === null || typeof body !== 'object' || Array.isArray(body) || body.properties === null || typeof body.properties !== 'object' || Array.isArray(body.properties)) {
        throw errors.arm.invalidBody({ message: "The request content must be an object with 'properties'." }, { target: 'properties' });
      }
      const props = body.properties;
      const tenantId = call.principal.tenantId;
      const roleDefinitionId = optionalString(props, 'roleDefinitionId', 1024);
      if (roleDefinitionId === undefined) throw errors.arm.invalidBody({ message: "The property 'properties.roleDefinitionId' is required." }, { target: 'properties.roleDefinitionId' });
      const roleId = roleGuidOf(roleDefinitionId);
      if (!roleId || !(await roleDefinitionOf(arm, tenantId, roleId))) throw errors.arm.roleDefinitionDoesNotExist({ id: roleId ?? roleDefinitionId.slice(0, 200) }, { target: 'properties.roleDefinitionId' });
      const principalId = optionalString(props, 'principalId', 64);
      if (principalId === undefined) throw errors.arm.invalidBody({ message: "The property 'properties.principalId' is required." }, { target: 'properties.principalId' });
      const given = optionalString(props, 'principalType', 32);
      if (given !== undefined && !principalTypes.includes(given)) {
        throw errors.arm.invalidBody({ message: `The property 'properties.principalType' must be one of ${principalTypes.join(', ')}.` }, { target: 'properties.principalType' });
      }
      const actual: PrincipalType | undefined = isUuid(principalId) ? await principalTypeOf(ctx, tenantId, principalId) : undefined;
      if (!actual) throw errors.arm.principalNotFound({ principalId, tenantId }, { target: 'properties.principalId' });
      if (given !== undefined && given !== actual) throw errors.arm.unmatchedPrincipalType({ principalId, actual, given }, { target: 'properties.principalType' });
      const description = optionalString(props, 'description', 2048) ?? null;
      const condition = optionalString(props, 'condition', 8192) ?? null;
      const conditionVersion = optionalString(props, 'conditionVersion', 8) ?? (condition ? '2.0' : null);
      const at = nowIso();
      const scope = call.resolved.role.scope;
      const wanted: RoleAssignmentRecord = {
        id: name.toLowerCase(),
        tenantId,
        scope,
        roleDefinitionId: roleId,
        principalId: principalId.toLowerCase(),
        principalType: actual,
        description,
        condition,
        conditionVersion,
        createdOn: at,
        updatedOn: at,
        createdBy: call.principal.objectId,
        updatedBy: call.principal.objectId,
      };
      const out = await roleWrite(ctx, async (trx) => {
        const existing = await roleStore.assignment(trx, name);
        if (existing) {
          const same = existing.tenantId === tenantId && scopeKey(existing.scope) === scopeKey(scope) && existing.roleDefinitionId === roleId && existing.principalId === wanted.principalId;
          if (!same) throw errors.arm.roleAssignmentUpdateNotPermitted();
          const updated = { ...existing, description, condition, conditionVersion, updatedOn: at, updatedBy: call.principal.objectId };
          await roleStore.updateAssignment(trx, updated);
          return { created: false, a: updated };
        }
        if (await roleStore.sameAssignment(trx, tenantId, scope, roleId, wanted.principalId)) throw errors.arm.roleAssignmentExists();
        await roleStore.insertAssignment(trx, wanted);
        return { created: true, a: wanted };
      }).catch((e) => {
        // A concurrent create of the same assignment (another name) lost the race to the unique index.
        throw isUniqueViolation(e) ? errors.arm.roleAssignmentExists() : e;
      });
      reply.code(out.created ? 201 : 200);
      return assignmentJson(out.a);
    },

    /** GET: the assignment at the path's scope. @throws 404 `RoleAssignmentNotFound`. */
    async get(req: FastifyRequest, _reply: FastifyReply, call: RoleCall) {
      const a = await find(req, call);
      if (!a) throw errors.arm.roleAssignmentNotFound({ name: nameOf(req) });
      return assignmentJson(a);
    },

    /** DELETE: 200 with the deleted assignment, 204 when there is none. */
    async delete(req: FastifyRequest, reply: FastifyReply, call: RoleCall) {
      const a = await find(req, call);
      if (!a) return reply.code(204).send();
      const deleted = await roleWrite(ctx, (trx) => roleStore.deleteAssignment(trx, a.id));
      if (!deleted) return reply.code(204).send();
      return assignmentJson(a);
    },

    /**
     * The list at a scope: at, above and below it; `atScope()` at or above only; `principalId eq`
     * one principal's; `assignedTo()` one principal's and its groups'. Needs
     * `roleAssignments/read` at the scope, except for a caller listing its own.
     */
    async list(req: FastifyRequest, _reply: FastifyReply, call: RoleCall) {
      const filter = assignmentFilter(queryValue(req, '$filter', 'filter'));
      const own = (filter.principalId ?? filter.assignedTo) === call.principal.objectId.toLowerCase();
      const { role } = call.resolved;
      if (!own && !(await arm.authorized(call.principal, assignmentActions.read, role.authScope))) throw authorizationFailed(call.principal, assignmentActions.read, role.authScope);
      const tenantId = call.principal.tenantId;
      const token = skipToken<{ a: string }>(req, ['$skipToken', 'skipToken'], (t) => typeof t.a === 'string' && isUuid(t.a), () => errors.arm.invalidParameter({ message: 'The $skipToken is invalid.' }, { target: '$skipToken' }));
      const principalIds = filter.assignedTo ? await principalIdsFor(arm, tenantId, filter.assignedTo) : filter.principalId ? [filter.principalId] : undefined;
      const ancestors = [...(await scopeAncestors(arm, role.scope))];
      const page = await roleStore.assignmentsAt(ctx.store.db, { tenantId, scope: role.scope, ancestors, below: !filter.atScope, principalIds, afterId: token?.a, limit: assignmentPageSize });
      const out: { value: unknown[]; nextLink?: string } = { value: page.items.map(assignmentJson) };
      if (page.more && page.lastId) {
        const path = `${role.scope === '/' ? '' : role.scope}/providers/Vendor.Authorization/roleAssignments`;
        const q: Record<string, string> = { 'api-version': call.apiVersion, $skipToken: encodeToken({ a: page.lastId }) };
        const f = queryValue(req, '$filter', 'filter');
        if (f !== undefined) q.$filter = f;
        out.nextLink = absoluteUrl(ctx.origin(), path, q);
      }
      return out;
    },
  };
}
