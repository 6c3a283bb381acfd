/**
 * What the role-definition operations mean (api-version 2022-04-01; reference
 * resource-manager-base §7.2, §7.3): the built-in roles (`arm/roles.ts`) and the tenant's
 * custom roles — create or update (201), get (at any scope, and by id `/{roleId}` in both
 * forms), delete (200 with the definition, 204 when absent), the list at a scope with
 * `$filter` (`roleName eq`, `type eq`, `atScopeAndBelow()`). Custom roles count in
 * authorization decisions (`arm/rbac.ts` `roleDefinitionOf`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { errors } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { armReader } from '../arm/gateway.ts';
import { queryValue } from '../arm/input.ts';
import { roleDefinitionOf, scopeAncestors } from '../arm/rbac.ts';
import { roleStore, scopeKey } from '../arm/role-store.ts';
import { builtInRole, builtInRoles, type RoleDefinition } from '../arm/roles.ts';
import type { RoleCall } from './assignments.ts';
import { roleWrite } from './role-write.ts';
import { definitionFilter, definitionIdPrefix, type RoleScope } from './role-scope.ts';
import { hasControlCharacter } from './policies.ts';

/** The RBAC actions of role definitions (the real provider's). */
export const definitionActions = {
  write: 'Vendor.Authorization/roleDefinitions/write',
  delete: 'Vendor.Authorization/roleDefinitions/delete',
} as const;

/** When the built-in roles say they were created and updated. */
const builtInTime = '2015-02-02T21:55:09.8806423Z';

/** The JSON of a role definition seen at `role` (2022-04-01 `RoleDefinition`). */
export function definitionJson(d: RoleDefinition, role: RoleScope) {
  return {
    properties: {
      roleName: d.roleName,
      type: d.type,
      description: d.description,
      assignableScopes: d.assignableScopes,
      permissions: [{ actions: d.actions, notActions: d.notActions, dataActions: d.dataActions, notDataActions: d.notDataActions }],
      createdOn: d.createdOn ?? builtInTime,
      updatedOn: d.updatedOn ?? builtInTime,
      createdBy: d.createdBy ?? null,
      updatedBy: d.updatedBy ?? null,
    },
    id: `${definitionIdPrefix(role)}/providers/Vendor.Authorization/roleDefinitions/${d.id}`,
    type: 'Vendor.Authorization/roleDefinitions',
    name: d.id,
  };
}

const idOf = (req: FastifyRequest) => (req.params as Record<string, string>).roleDefinitionId!;

/** A list of strings of a body member (absent → `[]`; no empty string, none over 1024 characters or with a control character). @throws 400 `InvalidRequestContent`. */
function strings(v: unknown, target: string, required = false): string[] {
  if (v === undefined || v === null) {
    if (required) throw errors.arm.invalidBody({ message: `The property '${target}' is required.` }, { target });
    return [];
  }
  if (!Array.isArray(v) || v.length > 2000 || v.some((x) => typeof x !== 'string' || x.length === 0 || x.length > 1024 || hasControlCharacter(x))) {
    throw errors.arm.invalidBody({ message: `The property '${target}' must be an array of non-empty strings.` }, { target });
  }
  return v as string[];
}

/** Whether a custom role is assignable at a scope of `ancestors` (at or above), or — with `below` — under `scope`. */
function visibleAt(d: RoleDefinition, ancestors: ReadonlySet<string>, scope: string, below: boolean): boolean {
  const key = scopeKey(scope);
  return d.assignableScopes.some((s) => ancestors.has(scopeKey(s)) || (below && (key === '/' || scopeKey(s).startsWith(`${key}/`))));
}

/** The role-definition handlers of `role-routes.ts`. */
export function definitionRules(ctx: AppContext) {
  const arm = armReader(ctx);

  return {
    /** PUT: a custom role created or replaced (201). */
    async put(req: FastifyRequest, reply: FastifyReply, call: RoleCall) {
      const id = idOf(req);
      if (!isUuid(id)) throw errors.arm.invalidRoleDefinitionName({ name: id });
      if (builtInRole(id)) throw errors.arm.builtInRoleReadOnly({ id });
      const body = req.body as { properties?: Record<string, unknown> } | undefined;
      const props = body && typeof body === 'object' && !Array.isArray(body) ? body.properties : undefined;
      if (props === null || typeof props !== 'object' || Array.isArray(props)) throw errors.arm.invalidBody({ message: "The request content must be an object with 'properties'." }, { target: 'properties' });
      const roleName = props.roleName;
      if (typeof roleName !== 'string' || roleName.trim() === '' || roleName.length > 512 || hasControlCharacter(roleName)) throw errors.arm.invalidBody({ message: "The property 'properties.roleName' is required: a name of 1 to 512 characters." }, { target: 'properties.roleName' });
      const description = props.description ?? '';
      if (typeof description !== 'string' || description.length > 2048 || description.includes('\u0000')) {
        throw errors.arm.invalidBody({ message: "The property 'properties.description' must be a string of at most 2048 characters without U+0000." }, { target: 'properties.description' });
      }
      if (props.type !== undefined && props.type !== null && (typeof props.type !== 'string' || props.type.toLowerCase() !== 'customrole')) {
        throw errors.arm.invalidBody({ message: "The property 'properties.type' must be 'CustomRole'." }, { target: 'properties.type' });
      }
      const perms = props.permissions ?? [];
      if (!Array.isArray(perms) || perms.length > 50 || perms.some((p) => p === null || typeof p !== 'object' || Array.isArray(p))) {
        throw errors.arm.invalidBody({ message: "The property 'properties.permissions' must be an array of permission objects." }, { target: 'properties.permissions' });
      }
      const join = (k: string) => perms.flatMap((p: Record<string, unknown>, i: number) => strings(p[k], `properties.permissions[${i}].${k}`));
      const assignable = props.assignableScopes === undefined || props.assignableScopes === null ? [call.resolved.role.scope] : strings(props.assignableScopes, 'properties.assignableScopes', true);
      if (assignable.length === 0) throw errors.arm.invalidBody({ message: "The property 'properties.assignableScopes' must name at least one scope." }, { target: 'properties.assignableScopes' });
      if (builtInRoles.some((r) => r.roleName.toLowerCase() === roleName.toLowerCase())) throw errors.arm.roleDefinitionNameExists();
      const tenantId = call.principal.tenantId;
      const at = nowIso();
      const saved = await roleWrite(ctx, async (trx) => {
        const existing = await roleStore.definition(trx, id);
        if (existing && existing.tenantId !== tenantId) throw errors.arm.roleDefinitionNameExists();
        const sameName = await roleStore.definitionsOf(trx, tenantId, roleName.toLowerCase());
        if (sameName.some((d) => d.id !== id.toLowerCase())) throw errors.arm.roleDefinitionNameExists();
        const d: RoleDefinition = {
          id: id.toLowerCase(),
          roleName,
          description,
          type: 'CustomRole',
          actions: join('actions'),
          notActions: join('notActions'),
          dataActions: join('dataActions'),
          notDataActions: join('notDataActions'),
          assignableScopes: assignable,
          tenantId,
          createdOn: existing?.createdOn ?? at,
          updatedOn: at,
          createdBy: existing?.createdBy ?? call.principal.objectId,
          updatedBy: call.principal.objectId,
        };
        await roleStore.putDefinition(trx, d, call.resolved.role.scope, !!existing);
        return d;
      }).catch((e) => {
        throw isUniqueViolation(e) ? errors.arm.roleDefinitionNameExists() : e;
      });
      reply.code(201);
      return definitionJson(saved, call.resolved.role);
    },

    /** GET: a built-in or one of the tenant's custom roles. @throws 404 `RoleDefinitionDoesNotExist`. */
    async get(req: FastifyRequest, _reply: FastifyReply, call: RoleCall) {
      const id = idOf(req);
      const d = isUuid(id) ? await roleDefinitionOf(arm, call.principal.tenantId, id) : undefined;
      if (!d) throw errors.arm.roleDefinitionNotFound({ id });
      return definitionJson(d, call.resolved.role);
    },

    /** DELETE: 200 with the deleted custom role, 204 when there is none. @throws 400 for a built-in, 409 while assignments name it. */
    async delete(req: FastifyRequest, reply: FastifyReply, call: RoleCall) {
      const id = idOf(req);
      if (isUuid(id) && builtInRole(id)) throw errors.arm.builtInRoleReadOnly({ id });
      const tenantId = call.principal.tenantId;
      const d = isUuid(id) ? await roleStore.definition(ctx.store.db, id) : undefined;
      if (!d || d.tenantId !== tenantId) return reply.code(204).send();
      const deleted = await roleWrite(ctx, async (trx) => {
        if (await roleStore.definitionInUse(trx, tenantId, d.id)) throw errors.arm.roleDefinitionHasAssignments();
        return roleStore.deleteDefinition(trx, d.id);
      });
      if (!deleted) return reply.code(204).send();
      return definitionJson(d, call.resolved.role);
    },

    /** The roles assignable at the scope (built-ins and the tenant's custom roles at or above it; with `atScopeAndBelow()` also below). */
    async list(req: FastifyRequest, _reply: FastifyReply, call: RoleCall) {
      const f = definitionFilter(queryValue(req, '$filter', 'filter'));
      const { role } = call.resolved;
      const name = f.roleName?.toLowerCase();
      const ancestors = await scopeAncestors(arm, role.scope);
      const custom = f.type?.toLowerCase() === 'builtinrole' ? [] : await roleStore.definitionsOf(ctx.store.db, call.principal.tenantId, name);
      const all = [...(f.type?.toLowerCase() === 'customrole' ? [] : builtInRoles), ...custom.filter((d) => visibleAt(d, ancestors, role.scope, f.atScopeAndBelow))];
      const value = all.filter((d) => (name === undefined || d.roleName.toLowerCase() === name) && (f.type === undefined || d.type.toLowerCase() === f.type.toLowerCase()));
      return { value: value.map((d) => definitionJson(d, role)) };
    },
  };
}
