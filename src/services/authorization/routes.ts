/**
 * Routes of role management policies (api-version 2020-10-01; spec resource-manager §4.1,
 * §4.2, §5, §9; reference §2.1): list (with `$filter` / `filter`), get, update (PATCH) and
 * delete (reset to the default), each at the four scope shapes of §4.1 plus the
 * `providers/Vendor.Subscription/subscriptions/{id}` form of the published examples and
 * child resources one level deep.
 *
 * Order of checks, all before the body is read: api-version → bearer → subscription →
 * resource group → the scope exists in the caller's tenant (404) → permission at the scope
 * (403 `AuthorizationFailed`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { ApiError } from '../../core/errors/index.ts';
import { armCheck, armErrors, armReader, type ArmCall } from '../arm/gateway.ts';
import { isAuthorized, type RoleDefinition } from '../arm/rbac.ts';
import { mergeRules } from './rules.ts';
import { defaultRules } from './defaults.ts';
import { modifiedBy, policyName, policyRecord, resolveScope, roleFromFilter, roleOfPolicy, rolesAtScope, type ResolvedScope } from './policies.ts';
import { PolicyStore } from './store.ts';

/** api-versions of the role management policy operations (spec §9). */
export const policyApiVersions = ['2020-10-01'];

/** RBAC actions (spec §4.1, §5; the write and delete actions of the real provider). */
export const policyActions = {
  read: 'Vendor.Authorization/roleAssignments/read',
  write: 'Vendor.Authorization/roleManagementPolicies/write',
  delete: 'Vendor.Authorization/roleManagementPolicies/delete',
} as const;

/** Route prefixes of the scope shapes (Fastify parameters named as {@link resolveScope} reads them). */
export const scopePrefixes = [
  '/providers/Vendor.Management/managementGroups/:managementGroupId',
  '/subscriptions/:subscriptionId',
  '/providers/Vendor.Subscription/subscriptions/:subscriptionId',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName/:childType/:childName',
];

interface PolicyCall extends ArmCall {
  resolved: ResolvedScope;
}

const collection = '/providers/Vendor.Authorization/roleManagementPolicies';

/**
 * One query parameter's value; a repeated parameter is ambiguous → 400 `InvalidParameter`
 * in the contract's `CloudError` shape (`code` and `message` only, reference §1.1).
 */
function queryValue(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(v)) throw new ApiError(400, 'InvalidParameter', `The query parameter '${name}' is given more than once.`);
  return v;
}

/**
 * A PATCH body must come as JSON (`application/json` or a `+json` type; reference §7.1):
 * a body the server did not parse as JSON — another media type, or none named — is refused.
 * @throws ApiError 415 `UnsupportedMediaType`.
 */
export function checkJsonBody(req: FastifyRequest): void {
  const type = req.headers['content-type'];
  const parsedAsJson = typeof type === 'string' && /^application\/([\w.+-]+\+)?json/i.test(type);
  const hasBody = Buffer.isBuffer(req.body) || typeof req.body === 'string' || Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (!parsedAsJson && hasBody) {
    throw new ApiError(415, 'UnsupportedMediaType', `The content media type '${type ?? ''}' is not supported. Only 'application/json' is supported.`);
  }
}

/** Registers the policy routes on `app`. */
export function registerPolicyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const calls = new WeakMap<FastifyRequest, PolicyCall>();
  // The gateway's cached hierarchy reader: the scope checks below reuse what armCheck looked up.
  const arm = armReader(ctx);
  const policies = new PolicyStore(ctx.store.db);

  const route = (method: 'GET' | 'PATCH' | 'DELETE', url: string, action: string, handler: (req: FastifyRequest, reply: FastifyReply, call: PolicyCall) => Promise<unknown>) =>
    app.route({
      method,
      url,
      config: { family: 'arm' },
      onRequest: async (req) => {
        const call = await armCheck(req, ctx, { apiVersions: policyApiVersions, requireResourceGroup: true });
        const resolved = await resolveScope(arm, req.params as Record<string, string>, call);
        if (!(await isAuthorized(arm, call.principal, action, resolved.scope))) throw armErrors.authorizationFailed(call.principal, action, resolved.scope);
        calls.set(req, { ...call, scope: resolved.scope, resolved });
      },
      handler: async (req, reply) => handler(req, reply, calls.get(req)!),
    });

  const roleOf = (req: FastifyRequest, call: PolicyCall): RoleDefinition => {
    const name = (req.params as Record<string, string>).roleManagementPolicyName!;
    const role = roleOfPolicy(call.principal.tenantId, call.resolved.scope, name);
    if (!role) throw new ApiError(404, 'RoleManagementPolicyNotFound', `The role management policy '${name}' does not exist at scope '${call.resolved.scope}'.`);
    return role;
  };

  for (const prefix of scopePrefixes) {
    route('GET', prefix + collection, policyActions.read, async (req, _reply, call) => {
      const tenantId = call.principal.tenantId;
      const filter = queryValue(req, '$filter') ?? queryValue(req, 'filter');
      const stored = await policies.listForScope(tenantId, call.resolved.scope);
      const roles = filter !== undefined && filter.trim() !== '' ? [await roleFromFilter(arm, filter, call.resolved.scope)] : rolesAtScope();
      return { value: roles.map((r) => policyRecord(tenantId, call.resolved, r, stored.get(r.id))) };
    });

    route('GET', `${prefix}${collection}/:roleManagementPolicyName`, policyActions.read, async (req, _reply, call) => {
      const role = roleOf(req, call);
      const stored = await policies.get(call.principal.tenantId, call.resolved.scope, role.id);
      return policyRecord(call.principal.tenantId, call.resolved, role, stored);
    });

    route('PATCH', `${prefix}${collection}/:roleManagementPolicyName`, policyActions.write, async (req, _reply, call) => {
      checkJsonBody(req);
      const role = roleOf(req, call);
      const tenantId = call.principal.tenantId;
      const scope = call.resolved.scope;
      const saved = await ctx.store.transaction(async (trx) => {
        const next = { tenantId, scope, roleDefinitionId: role.id, name: policyName(tenantId, scope, role.id), rules: defaultRules(), lastModifiedBy: modifiedBy(call.principal), lastModifiedAt: nowIso() };
        const current = await policies.lockForUpdate(next, trx);
        next.rules = mergeRules(current?.rules ?? next.rules, req.body);
        await policies.put(next, trx);
        return next;
      });
      return policyRecord(tenantId, call.resolved, role, saved);
    });

    route('DELETE', `${prefix}${collection}/:roleManagementPolicyName`, policyActions.delete, async (req, reply, call) => {
      const name = (req.params as Record<string, string>).roleManagementPolicyName!;
      const role = roleOfPolicy(call.principal.tenantId, call.resolved.scope, name);
      if (!role) return reply.code(204).send();
      await policies.remove(call.principal.tenantId, call.resolved.scope, role.id);
      return reply.code(200).send();
    });
  }
}
