/**
 * The data share part of a world file: `dataShareAccounts` of a resource group, each the
 * account resource (`name`, `location` — default the group's —, `tags`, `identity` — default a
 * system-assigned identity made from the account id —, `systemData`, `properties`) with its
 * `shares` (share resources) and each share's `synchronizations` (the API's
 * `ShareSynchronization` objects: `synchronizationId`, `synchronizationMode`, `status`,
 * `message`, `startTime`, `endTime`, `durationMs`, `consumerName`, `consumerEmail`,
 * `consumerTenantName`; finished runs), kept in file order. Accounts and shares go to
 * `arm_resources` through `ArmStore.insertResources` (`data.ts`), runs through
 * `DataShareStore.addSynchronization`. Invitations and share subscriptions are not part of a
 * world yet.
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { stableUuid } from '../core/ids.ts';
import type { Database } from '../store/database.ts';
import { fromJson } from '../store/db.ts';
import { DataShareStore, type ShareSynchronization } from '../services/datashare/store.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, exportedGroups, type DataContext } from './data.ts';
import { fileResource, jsonObject, resourceBody, resourceFields, resourceTimes } from './resource.ts';

const strict = { additionalProperties: false } as const;
const accountType = 'Vendor.DataShare/accounts';
const shareType = 'Vendor.DataShare/accounts/shares';
const time = Type.String({ format: 'date-time' });

/** A finished synchronization run of a share (the API's ShareSynchronization). */
export const WorldShareSynchronization = Type.Object(
  {
    synchronizationId: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' })),
    synchronizationMode: Type.Union([Type.Literal('Incremental'), Type.Literal('FullSync')]),
    status: Type.Union([Type.Literal('Succeeded'), Type.Literal('Failed'), Type.Literal('Canceled')]),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
    startTime: time,
    endTime: Type.Optional(time),
    durationMs: Type.Optional(Type.Integer({ minimum: 0 })),
    consumerName: Type.Optional(Type.String({ maxLength: 256 })),
    consumerEmail: Type.Optional(Type.String({ maxLength: 256 })),
    consumerTenantName: Type.Optional(Type.String({ maxLength: 256 })),
  },
  strict,
);

/** A data share account with its shares. */
export const WorldDataShareAccount = Type.Object(
  {
    ...resourceFields,
    location: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    identity: Type.Optional(jsonObject),
    shares: Type.Optional(Type.Array(Type.Object({ ...resourceFields, synchronizations: Type.Optional(Type.Array(WorldShareSynchronization, { maxItems: 100_000 })) }, strict), { maxItems: 10_000 })),
  },
  { ...strict, description: 'A data share account resource with its shares and their synchronization runs.' },
);

/** Resource-group properties of the data share kinds. */
export const dataShareGroupProperties = { dataShareAccounts: Type.Optional(Type.Array(WorldDataShareAccount, { maxItems: 1000 })) };

/** Checks the data share accounts of the tenant entry's groups and queues their writes. */
export function resolveDataShare(c: DataContext): void {
  for (const g of c.groups) {
    (g.data.dataShareAccounts ?? []).forEach((a, i) => {
      const rel = (p: string) => `${g.path}/dataShareAccounts/${i}${p}`;
      const where = (p: string) => c.at(rel(p));
      const accountId = `${g.id}/providers/${accountType}/${a.name}`;
      if (!c.unique('resource', accountId.toLowerCase(), rel(''))) return;
      const identity = { principalId: stableUuid('datashare-identity', accountId.toLowerCase()), tenantId: c.tenant.id, type: 'SystemAssigned' };
      const account = resourceBody(accountId, accountType, a, c.now, { tracked: true, location: a.location ?? g.location, identity, defaults: { createdAt: c.now, provisioningState: 'Succeeded' } });
      const shares = (a.shares ?? []).map((s, j) => {
        const id = `${accountId}/shares/${s.name}`;
        c.unique('resource', id.toLowerCase(), rel(`/shares/${j}`));
        const runs: ShareSynchronization[] = (s.synchronizations ?? []).map((r, k) => {
          const synchronizationId = (r.synchronizationId ?? stableUuid('world-synchronization', id.toLowerCase(), String(k))).toLowerCase();
          c.unique('synchronization id', synchronizationId, rel(`/shares/${j}/synchronizations/${k}`));
          if (r.endTime !== undefined && Date.parse(r.endTime) < Date.parse(r.startTime)) c.problems.push(`${where(`/shares/${j}/synchronizations/${k}/endTime`)}: before startTime`);
          return { ...r, synchronizationId };
        });
        return { id, body: resourceBody(id, shareType, s, c.now, { tracked: false, defaults: { createdAt: c.now, provisioningState: 'Succeeded', shareKind: 'CopyBased' } }), runs };
      });
      const tenantId = c.tenant.id;
      const common = { tenantId, subscriptionId: g.subscriptionId, resourceGroup: g.name };
      c.resources.push({ ...common, id: accountId, type: accountType, name: a.name, parentId: g.id, body: account, ...resourceTimes(account, c.now) });
      for (const s of shares) c.resources.push({ ...common, id: s.id, type: shareType, name: String(s.body.name), parentId: accountId, body: s.body, ...resourceTimes(s.body, c.now) });
      if (shares.some((s) => s.runs.length))
        c.writes.push(async (_ctx, trx) => {
          const store = new DataShareStore(trx);
          for (const s of shares) for (const r of s.runs) await store.addSynchronization({ ...r, tenantId, shareIdLower: s.id.toLowerCase() }, trx);
        });
    });
  }
}

/** Adds the data share accounts of the store to the exported resource groups. */
export async function exportDataShare(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const [resources, runs] = await Promise.all([
    db.selectFrom('arm_resources').select(['id_lower', 'parent_id_lower', 'type_lower', 'body']).where('type_lower', 'in', [accountType.toLowerCase(), shareType.toLowerCase()]).orderBy('id_lower').execute(),
    db.selectFrom('datashare_synchronizations').selectAll().where('share_subscription_id_lower', 'is', null).where('status', 'in', ['Succeeded', 'Failed', 'Canceled']).orderBy('seq').execute(),
  ]);
  const groups = exportedGroups(out);
  for (const r of resources.filter((x) => x.type_lower === accountType.toLowerCase())) {
    const g = groups.get(r.parent_id_lower);
    if (!g) continue;
    const shares = resources
      .filter((x) => x.parent_id_lower === r.id_lower && x.type_lower === shareType.toLowerCase())
      .map((x) => {
        const s = runs.filter((y) => y.share_id_lower === x.id_lower).map((y) => ({
          synchronizationId: y.synchronization_id,
          synchronizationMode: y.synchronization_mode as 'Incremental',
          status: y.status as 'Succeeded',
          ...(y.message !== null ? { message: y.message } : {}),
          startTime: y.start_time,
          ...(y.end_time !== null ? { endTime: y.end_time } : {}),
          ...(y.duration_ms !== null ? { durationMs: Number(y.duration_ms) } : {}),
          ...(y.consumer_name !== null ? { consumerName: y.consumer_name } : {}),
          ...(y.consumer_email !== null ? { consumerEmail: y.consumer_email } : {}),
          ...(y.consumer_tenant_name !== null ? { consumerTenantName: y.consumer_tenant_name } : {}),
        }));
        return { ...fileResource(fromJson<Record<string, any>>(x.body)!), ...(s.length ? { synchronizations: s } : {}) };
      });
    (g.dataShareAccounts ??= []).push({ ...fileResource(fromJson<Record<string, any>>(r.body)!), ...(shares.length ? { shares } : {}) });
    g.dataShareAccounts.sort(byKey((x) => x.name.toLowerCase()));
  }
}
