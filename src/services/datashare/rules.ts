/**
 * What the data share operations mean (spec: resource-manager §2.4, §4.5, §7 rule 2;
 * reference §5): accounts, shares and invitations on the provider side, declared on the
 * resource-manager kernel (`../arm/kernel.ts`); the consumer side is in `consumer.ts`.
 * Every error is `errors.datashare`'s (or the gateway's), rendered as `DataShareError`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { isUuid, newUuid, stableUuid } from '../../core/ids.ts';
import type { Principal } from '../../core/identity/identity.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { ArmInput } from '../arm/input.ts';
import { systemDataFor, TrackedResources } from '../arm/kernel.ts';
import type { ArmResourceRow } from '../arm/store.ts';
import { DataShareStore } from './store.ts';

/**
 * The body of a finished delete (the definition's 200: an `OperationResponse`), `startTime`
 * and `endTime` the moment of the delete (ISO 8601 UTC).
 */
export function deletedOperation(at: string): { status: 'Succeeded'; startTime: string; endTime: string } {
  return { status: 'Succeeded', startTime: at, endTime: at };
}

/** Resources per page of the account and share lists. */
export const resourcePageSize = 50;

/** The provider namespace of the area. */
export const ns = 'Vendor.DataShare';
/** Resource types as the service spells them in responses. */
export const types = {
  account: `${ns}/accounts`,
  share: `${ns}/accounts/shares`,
  invitation: `${ns}/accounts/shares/invitations`,
  shareSubscription: `${ns}/accounts/shareSubscriptions`,
};

/** The `skipToken` spellings the area reads (first present wins). */
export const skipTokenNames = ['$skipToken', '$skiptoken', 'skipToken'];

/** 400 `InvalidSkipToken` for a token that does not decode. */
export const invalidSkipToken = (token: string) => errors.datashare.invalidSkipToken({ token }, { target: '$skipToken' });

/** Body and member validation with the area's errors (`InvalidRequestContent` naming the member). */
export const input = new ArmInput({
  invalid: (target, message) => errors.datashare.invalidBody({ message }, { target }),
  unsupportedMediaType: (contentType) => errors.datashare.bodyNotJson({ contentType }),
  invalidTag: (tag) => errors.datashare.invalidTag({ tag }, { target: 'tags' }),
  tagsNotObject: "The 'tags' member must be an object of strings.",
});

const namePattern = /^[A-Za-z0-9][-\w.]{0,88}[A-Za-z0-9_]$|^[A-Za-z0-9]$/u;
/** @throws 400 `InvalidResourceName` (target: the kind) when a new resource's name breaks the naming rule. */
export function checkName(kind: string, value: string): void {
  if (!namePattern.test(value)) throw errors.datashare.invalidResourceName({ kind, name: value }, { target: kind });
}

/** The user fields of a resource written by `p`. */
export function userOf(p: Principal): { userName: string; userEmail: string | undefined } {
  return { userName: p.name ?? p.userPrincipalName ?? p.appId, userEmail: p.userPrincipalName };
}

/** The path's parameters. */
export const params = (req: FastifyRequest) => req.params as Record<string, string>;

/** The resource group of the path: subscription, name and id. */
export function rgPath(req: FastifyRequest): { sub: string; rg: string; rgId: string } {
  const p = params(req);
  return { sub: p.subscriptionId!, rg: p.resourceGroupName!, rgId: `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroupName}` };
}

/** The data share resources (tracked in `arm_resources`) and their lookups. */
export class DataShareResources extends TrackedResources {
  readonly store: DataShareStore;

  constructor(ctx: AppContext) {
    super(ctx, { pageSize: resourcePageSize, skipTokenNames, invalidSkipToken, concurrentCreate: (name) => errors.datashare.concurrentCreate({ name }) });
    this.store = new DataShareStore(ctx.store.db, ctx.cache);
  }

  /** The account of the path. @throws 404 `ResourceNotFound`. */
  account(req: FastifyRequest): Promise<ArmResourceRow> {
    const { rgId, rg } = rgPath(req);
    const name = params(req).accountName!;
    return this.require(`${rgId}/providers/${types.account}/${name}`, () => errors.datashare.resourceNotFound({ typeAndName: `${types.account}/${name}`, resourceGroup: rg }));
  }

  /** The child `segment/name` of `parent`, of `type`. @throws 404 `ResourceNotFound`. */
  child(req: FastifyRequest, parent: ArmResourceRow, segment: string, type: string, name: string): Promise<ArmResourceRow> {
    return this.require(`${parent.id}/${segment}/${name}`, () => errors.datashare.resourceNotFound({ typeAndName: `${types.account}/${parent.name}/${segment}/${name}`, resourceGroup: rgPath(req).rg }), type);
  }

  /** The share of the path. @throws 404 `ResourceNotFound` for the account or the share. */
  async share(req: FastifyRequest): Promise<ArmResourceRow> {
    return this.child(req, await this.account(req), 'shares', types.share, params(req).shareName!);
  }

  /** Deletes a resource with everything below it, answering 200 with the operation or 204 when it did not exist. */
  async deleteAnswer(reply: FastifyReply, id: string): Promise<unknown> {
    const at = nowIso();
    const existed = await this.delete(id, (tx) => this.store.deleteBelow(id.toLowerCase(), tx));
    reply.code(existed ? 200 : 204);
    return existed ? deletedOperation(at) : undefined;
  }
}

/** The provider-side operations of the area (handlers of `routes.ts`). */
export function providerRules(r: DataShareResources) {
  return {
    /** PUT account: `location` and a `SystemAssigned` identity required; the first write's creation fields kept. */
    async putAccount(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const { sub, rgId } = rgPath(req);
      const name = params(req).accountName!;
      checkName('account', name);
      const body = input.body(req, true);
      const location = input.string(body, 'location', 'location', 64);
      if (!location) throw errors.datashare.invalidBody({ message: "The 'location' member is required." }, { target: 'location' });
      const identity = body.identity as Record<string, unknown> | undefined;
      if (!identity || typeof identity !== 'object' || identity.type !== 'SystemAssigned') {
        throw errors.datashare.invalidBody({ message: "The 'identity' member is required and its 'type' must be 'SystemAssigned'." }, { target: 'identity' });
      }
      const tags = input.tags(body.tags);
      const id = `${rgId}/providers/${types.account}/${name}`;
      const target = { id, name, type: types.account, parentId: rgId, tenantId: call.principal.tenantId, subscriptionId: sub, resourceGroup: call.resourceGroup!.name };
      return r.createOrUpdate(reply, target, (existing, at, names) => {
        const prev = existing?.body as any;
        const user = userOf(call.principal);
        return {
          ...names,
          type: types.account,
          location: prev?.location ?? location,
          tags,
          identity: { principalId: prev?.identity?.principalId ?? stableUuid('datashare-identity', id.toLowerCase()), tenantId: call.principal.tenantId, type: 'SystemAssigned' },
          systemData: systemDataFor(call.principal, at, prev?.systemData),
          properties: { createdAt: prev?.properties?.createdAt ?? at, provisioningState: 'Succeeded', userEmail: prev?.properties?.userEmail ?? user.userEmail, userName: prev?.properties?.userName ?? user.userName },
        };
      });
    },
    async getAccount(req: FastifyRequest) {
      return (await r.account(req)).body;
    },
    async listAccounts(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const { rgId } = rgPath(req);
      return r.list(req, call, rgId, types.account, `${rgId}/providers/${types.account}`);
    },
    async listAccountsInSubscription(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      return r.list(req, call, undefined, types.account, `/subscriptions/${call.subscription!.subscriptionId}/providers/${types.account}`);
    },
    async deleteAccount(req: FastifyRequest, reply: FastifyReply) {
      return r.deleteAnswer(reply, `${rgPath(req).rgId}/providers/${types.account}/${params(req).accountName}`);
    },
    /** PATCH account: only `tags` change. */
    async patchAccount(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const body = input.body(req, true);
      const at = nowIso();
      const prev = account.body as any;
      const resource = { ...prev, tags: body.tags === undefined ? prev.tags : input.tags(body.tags), systemData: systemDataFor(call.principal, at, prev.systemData) };
      await r.arm.putResource({ ...account, body: resource, updatedAt: at });
      return resource;
    },

    /** PUT share: `shareKind` CopyBased (default) or InPlace. */
    async putShare(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const name = params(req).shareName!;
      checkName('share', name);
      const props = input.member(input.body(req, true).properties, 'properties', false);
      const shareKind = input.string(props, 'shareKind', 'properties.shareKind') ?? 'CopyBased';
      if (shareKind !== 'CopyBased' && shareKind !== 'InPlace') {
        throw errors.datashare.invalidBody({ message: `The share kind '${shareKind}' is invalid. Allowed values: CopyBased, InPlace.` }, { target: 'properties.shareKind' });
      }
      const description = input.string(props, 'description', 'properties.description');
      const terms = input.string(props, 'terms', 'properties.terms');
      const target = { id: `${account.id}/shares/${name}`, name, type: types.share, parentId: account.id, tenantId: call.principal.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup };
      return r.createOrUpdate(reply, target, (existing, at, names) => {
        const prev = existing?.body as any;
        const user = userOf(call.principal);
        return {
          ...names,
          type: types.share,
          systemData: systemDataFor(call.principal, at, prev?.systemData),
          properties: { createdAt: prev?.properties?.createdAt ?? at, description, provisioningState: 'Succeeded', shareKind, terms, userEmail: user.userEmail, userName: user.userName },
        };
      });
    },
    async getShare(req: FastifyRequest) {
      return (await r.share(req)).body;
    },
    async listShares(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      return r.list(req, call, account.id, types.share, `${account.id}/shares`);
    },
    async deleteShare(req: FastifyRequest, reply: FastifyReply) {
      const account = await r.account(req);
      return r.deleteAnswer(reply, `${account.id}/shares/${params(req).shareName}`);
    },

    /** PUT invitation: created once (no update); `targetEmail`, or a tenant and object id. */
    async putInvitation(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const share = await r.share(req);
      const name = params(req).invitationName!;
      checkName('invitation', name);
      const id = `${share.id}/invitations/${name}`;
      if (await r.arm.getResource(id)) throw errors.datashare.invitationAlreadyExists({ name });
      const props = input.member(input.body(req, true).properties, 'properties', false);
      const targetEmail = input.string(props, 'targetEmail', 'properties.targetEmail', 320);
      const targetActiveDirectoryId = input.string(props, 'targetActiveDirectoryId', 'properties.targetActiveDirectoryId', 64);
      const targetObjectId = input.string(props, 'targetObjectId', 'properties.targetObjectId', 64);
      for (const [key, v] of [['targetActiveDirectoryId', targetActiveDirectoryId], ['targetObjectId', targetObjectId]] as const) {
        if (v !== undefined && !isUuid(v)) throw errors.datashare.invalidBody({ message: `The value '${v}' of 'properties.${key}' is not a GUID.` }, { target: `properties.${key}` });
      }
      if (targetEmail !== undefined && !/^[^@\s]+@[^@\s]+$/u.test(targetEmail)) {
        throw errors.datashare.invalidBody({ message: `The target e-mail '${targetEmail}' is not a valid e-mail address.` }, { target: 'properties.targetEmail' });
      }
      if (!targetEmail && !(targetActiveDirectoryId && targetObjectId)) {
        throw errors.datashare.invalidBody({ message: "An invitation needs 'targetEmail', or both 'targetActiveDirectoryId' and 'targetObjectId'." }, { target: 'properties' });
      }
      const at = nowIso();
      const invitationId = newUuid();
      const user = userOf(call.principal);
      const resource = {
        id,
        name,
        type: types.invitation,
        systemData: systemDataFor(call.principal, at),
        properties: { invitationId, invitationStatus: 'Pending', sentAt: at, targetEmail, targetActiveDirectoryId, targetObjectId, userEmail: user.userEmail, userName: user.userName },
      };
      const tenantId = call.principal.tenantId;
      await r.conflictSafe(name, () =>
        r.ctx.store.transaction(async (tx) => {
          await r.arm.putResource({ id, tenantId, subscriptionId: share.subscriptionId, resourceGroup: share.resourceGroup, type: types.invitation, name, parentId: share.id, body: resource, createdAt: at, updatedAt: at }, tx);
          const lookup = { invitationId, tenantId, invitationResourceId: id, shareIdLower: share.id.toLowerCase(), status: 'Pending' };
          await r.store.addInvitation({ ...lookup, targetEmailLower: targetEmail?.toLowerCase(), targetTenantId: targetActiveDirectoryId?.toLowerCase(), targetObjectId: targetObjectId?.toLowerCase() }, tx);
        }),
      );
      reply.code(201);
      return resource;
    },
    async getInvitation(req: FastifyRequest) {
      const account = await r.account(req);
      const p = params(req);
      const share = await r.child(req, account, 'shares', types.share, p.shareName!);
      const row = await r.arm.getResource(`${share.id}/invitations/${p.invitationName}`);
      if (!row) throw errors.datashare.resourceNotFound({ typeAndName: `${types.account}/${account.name}/shares/${share.name}/invitations/${p.invitationName}`, resourceGroup: rgPath(req).rg });
      return row.body;
    },
  };
}
