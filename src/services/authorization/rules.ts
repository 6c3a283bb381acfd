/**
 * What the role management policy operations mean (api-version 2020-10-01; spec
 * resource-manager §4.1, §4.2; reference §2.1): list (with `$filter` / `filter`), get,
 * update (PATCH, rules merged by id: `merge.ts`) and delete (reset to the default). The
 * scope of the path is resolved before the action is checked (`resolve`, declared with
 * each route): a scope that does not exist in the caller's tenant is a 404 before any 403.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { errors } from '../../core/errors/index.ts';
import { armReader, type ArmCall } from '../arm/gateway.ts';
import { singleQueryValue } from '../arm/input.ts';
import type { RoleDefinition } from '../arm/rbac.ts';
import { defaultRules } from './defaults.ts';
import { mergeRules } from './merge.ts';
import { modifiedBy, policyJson, policyName, resolveScope, roleFromFilter, roleOfPolicy, rolesAtScope, type ResolvedScope } from './policies.ts';
import type { Kysely } from 'kysely';
import { cacheKey } from '../../core/cache.ts';
import type { Database } from '../../store/database.ts';
import { PolicyStore, type StoredPolicy } from './store.ts';

/** A policy operation's call: the gateway's, with the resolved scope of the path. */
export type PolicyCall = ArmCall & { resolved: ResolvedScope };

/**
 * A PATCH body must come as JSON (`application/json` or a `+json` type; reference §7.1):
 * a body the server did not parse as JSON — another media type, or none named — is refused.
 * @throws ApiError 415 `UnsupportedMediaType`.
 */
export function checkJsonBody(req: FastifyRequest): void {
  const type = req.headers['content-type'];
  const parsedAsJson = typeof type === 'string' && /^application\/([\w.+-]+\+)?json/i.test(type);
  const hasBody = Buffer.isBuffer(req.body) || typeof req.body === 'string' || Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (!parsedAsJson && hasBody) throw errors.arm.unsupportedMediaTypeJsonOnly({ contentType: type ?? '' });
}

/**
 * One query parameter's value; a repeated parameter is ambiguous → 400 `InvalidParameter`
 * in the contract's `CloudError` shape (`code` and `message` only, reference §1.1).
 */
const queryValue = (req: FastifyRequest, name: string) => singleQueryValue(req, name, (n) => errors.arm.repeatedQueryParameter({ name: n }));

/** The policy operations (handlers of `routes.ts`) and the scope resolution they share. */
export function policyRules(ctx: AppContext) {
  // The gateway's cached hierarchy reader: the scope checks reuse what the gateway looked up.
  const arm = armReader(ctx);
  const policies = new PolicyStore(ctx.store.db);
  /**
   * Changed policies by tenant, scope and role (undefined: the policy is computed), kept in the
   * `arm` cache area: a PATCH or DELETE changes the area in its transaction, by the policy
   * table's triggers (`core/cache-tables.ts`), so every instance sees it at its next request.
   */
  const storedPolicies = ctx.cache.shared<StoredPolicy | undefined>('authz.storedPolicies', 'arm', 1000);
  const storedPolicy = (tenantId: string, scope: string, roleId: string) =>
    storedPolicies.get(cacheKey(tenantId, scope.toLowerCase(), roleId.toLowerCase()), () => policies.get(tenantId, scope, roleId));
  const policyWrite = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> => ctx.store.transaction(fn);

  /** The role of the path's policy name at the scope. @throws 404 `RoleManagementPolicyNotFound`. */
  const roleOf = (req: FastifyRequest, call: PolicyCall): RoleDefinition => {
    const name = (req.params as Record<string, string>).roleManagementPolicyName!;
    const role = roleOfPolicy(call.principal.tenantId, call.resolved.scope, name);
    if (!role) throw errors.arm.roleManagementPolicyNotFound({ name, scope: call.resolved.scope });
    return role;
  };

  return {
    /** Resolves the path's scope (404 `ManagementGroupNotFound` / `ResourceNotFound`). */
    resolve: (req: FastifyRequest, call: ArmCall) => resolveScope(arm, req.params as Record<string, string>, call),

    /** Every role's policy at the scope, or the one `$filter` names. */
    // Reads answer JSON text spliced from the policies' texts (policyJson): no record is built and serialized.
    async list(req: FastifyRequest, reply: FastifyReply, call: PolicyCall) {
      const tenantId = call.principal.tenantId;
      const filter = queryValue(req, '$filter') ?? queryValue(req, 'filter');
      reply.type('application/json; charset=utf-8');
      if (filter !== undefined && filter.trim() !== '') {
        // One role: its stored policy by primary key, not every changed policy of the scope.
        const role = await roleFromFilter(arm, filter, call.resolved.scope);
        return `{"value":[${policyJson(tenantId, call.resolved, role, await storedPolicy(tenantId, call.resolved.scope, role.id))}]}`;
      }
      const stored = await policies.listForScope(tenantId, call.resolved.scope);
      return `{"value":[${rolesAtScope()
        .map((r) => policyJson(tenantId, call.resolved, r, stored.get(r.id)))
        .join(',')}]}`;
    },

    async get(req: FastifyRequest, reply: FastifyReply, call: PolicyCall) {
      const role = roleOf(req, call);
      const stored = await storedPolicy(call.principal.tenantId, call.resolved.scope, role.id);
      reply.type('application/json; charset=utf-8');
      return policyJson(call.principal.tenantId, call.resolved, role, stored);
    },

    /** PATCH: the body's rules merged into the current ones by id, under a row lock. */
    async patch(req: FastifyRequest, reply: FastifyReply, call: PolicyCall) {
      checkJsonBody(req);
      const role = roleOf(req, call);
      const tenantId = call.principal.tenantId;
      const scope = call.resolved.scope;
      const saved = await policyWrite(async (trx) => {
        const next = { tenantId, scope, roleDefinitionId: role.id, name: policyName(tenantId, scope, role.id), rules: defaultRules(), lastModifiedBy: modifiedBy(call.principal), lastModifiedAt: nowIso() };
        const current = await policies.lockForUpdate(next, trx);
        next.rules = mergeRules(current?.rules ?? next.rules, req.body);
        await policies.put(next, trx);
        return next;
      });
      reply.type('application/json; charset=utf-8');
      return policyJson(tenantId, call.resolved, role, saved);
    },

    /** DELETE: back to the default (200), 204 for a name of no role. */
    async delete(req: FastifyRequest, reply: FastifyReply, call: PolicyCall) {
      const name = (req.params as Record<string, string>).roleManagementPolicyName!;
      const role = roleOfPolicy(call.principal.tenantId, call.resolved.scope, name);
      if (!role) return reply.code(204).send();
      await policyWrite((trx) => policies.remove(call.principal.tenantId, call.resolved.scope, role.id, trx));
      return reply.code(200).send();
    },
  };
}
