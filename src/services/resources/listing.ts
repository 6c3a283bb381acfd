/**
 * The generic resource listing (reference resource-manager-base §3):
 * `GET /subscriptions/{id}/resources` and `…/resourceGroups/{rg}/resources` list what every
 * area tracks in the scope — the union of the areas' `listedResources` queries (the `arm`
 * module's `arm_resources`, automation's webhooks), each narrowed through its index to the
 * subscription (and group) — in id order, `$top` per page, keyset next links (`$skiptoken`).
 *
 * `$filter` (terms joined by `and` / `or`, `and` binding tighter): `resourceType`, `name`,
 * `resourceGroup`, `location` with `eq` / `ne` (a `resourceType` in a configured alias namespace,
 * `STRATUS_PROVIDER_NAMESPACE_ALIASES`, names the `Vendor.` one); `substringof('<v>', name|resourceGroup)`;
 * `startswith(tagName, '<prefix>')` (tag names compared case-insensitively);
 * `tagName eq '<n>' [and tagValue eq '<v>']` (the matching resources are then listed without
 * their tags, as the contract says). `$expand`: any of `createdTime`, `changedTime`,
 * `provisioningState`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { AppContext, ServiceModule } from '../../context.ts';
import type { Database } from '../../store/database.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { bad, invalidFilter, pageSizeOf, params, skipTokenOf } from './input.ts';
import { isPostgres } from '../../store/db.ts';
import { jsonMember, ResourcesStore } from './store.ts';
import { readableGroups } from './access.ts';

/** The read action of a subscription's resource listing. */
export const subscriptionResourcesRead = 'Vendor.Resources/subscriptions/resources/read';

type Term = (db: Kysely<Database>) => RawBuilder<SqlBool>;

const quoted = `'((?:[^']|'')*)'`;
const unquote = (s: string) => s.replace(/''/g, "'");
const columns: Record<string, (db: Kysely<Database>) => RawBuilder<string | null>> = {
  resourcetype: () => sql<string>`u.type_lower`,
  name: () => sql<string>`lower(u.name)`,
  resourcegroup: () => sql<string>`u.resource_group_lower`,
  location: (db) => sql<string | null>`lower(${jsonMember(db, 'u.body', 'location')})`,
};

/** Splits `text` at ` and ` / ` or ` outside quotes and parentheses, keeping the joiners. */
function split(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inQuote = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") inQuote = !inQuote;
    else if (!inQuote && c === '(') depth++;
    else if (!inQuote && c === ')') depth--;
    else if (!inQuote && depth === 0 && c === ' ') {
      const m = /^ (and|or) /iu.exec(text.slice(i));
      if (m) {
        out.push(text.slice(start, i).trim(), m[1]!.toLowerCase());
        i += m[0].length - 1;
        start = i + 1;
      }
    }
  }
  out.push(text.slice(start).trim());
  return out;
}

/** One term of a filter as an expression over the union's columns; undefined when it is not one of the documented forms. */
function term(t: string, aliases: readonly string[], tagValue?: string): Term | undefined {
  let m = new RegExp(`^(resourceType|name|resourceGroup|location)\\s+(eq|ne)\\s+${quoted}$`, 'iu').exec(t);
  if (m) {
    const col = columns[m[1]!.toLowerCase()]!;
    let v = unquote(m[3]!).toLowerCase();
    // A client's own namespace prefix (the configured aliases) names the `Vendor.` one.
    const alias = m[1]!.toLowerCase() === 'resourcetype' ? aliases.find((a) => v.startsWith(a.toLowerCase())) : undefined;
    if (alias) v = `vendor.${v.slice(alias.length)}`;
    const eq = m[2]!.toLowerCase() === 'eq';
    return (db) => (eq ? sql<SqlBool>`${col(db)} = ${v}` : sql<SqlBool>`(${col(db)} <> ${v} or ${col(db)} is null)`);
  }
  m = new RegExp(`^substringof\\(\\s*${quoted}\\s*,\\s*(name|resourceGroup)\\s*\\)$`, 'iu').exec(t);
  if (m) {
    const pattern = `%${unquote(m[1]!).toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
    const col = columns[m[2]!.toLowerCase()]!;
    return (db) => sql<SqlBool>`${col(db)} like ${pattern} escape '\\'`;
  }
  m = new RegExp(`^startswith\\(\\s*tagName\\s*,\\s*${quoted}\\s*\\)$`, 'iu').exec(t);
  if (m) {
    const pattern = `${unquote(m[1]!).toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
    return (db) =>
      isPostgres(db)
        ? sql<SqlBool>`exists (select 1 from jsonb_object_keys(case when jsonb_typeof(u.body::jsonb -> 'tags') = 'object' then u.body::jsonb -> 'tags' else '{}'::jsonb end) k where lower(k) like ${pattern} escape '\\')`
        : sql<SqlBool>`exists (select 1 from json_each(u.body, '$.tags') k where lower(k.key) like ${pattern} escape '\\')`;
  }
  m = new RegExp(`^tagName\\s+eq\\s+${quoted}$`, 'iu').exec(t);
  if (m) {
    const name = unquote(m[1]!);
    return (db) => (tagValue === undefined ? sql<SqlBool>`${jsonMember(db, 'u.body', 'tags', name)} is not null` : sql<SqlBool>`${jsonMember(db, 'u.body', 'tags', name)} = ${tagValue}`);
  }
  return undefined;
}

/** The compiled `$filter`, and whether it filters by tag. @throws 400 `InvalidFilter` for another form */
export function compileResourceFilter(text: string, aliases: readonly string[] = []): { where: (db: Kysely<Database>) => Expression<SqlBool>; byTag: boolean } {
  const parts = split(text);
  const groups: Term[][] = [[]];
  let byTag = false;
  for (let i = 0; i < parts.length; i += 2) {
    const t = parts[i]!;
    // `tagName eq 'n' and tagValue eq 'v'` is one term.
    const next = parts[i + 2];
    const value = parts[i + 1] === 'and' && next ? new RegExp(`^tagValue\\s+eq\\s+${quoted}$`, 'iu').exec(next) : null;
    const compiled = term(t, aliases, value ? unquote(value[1]!) : undefined);
    if (!compiled) throw invalidFilter(text);
    if (/^(tagName|startswith\(\s*tagName)/iu.test(t)) byTag = true;
    groups.at(-1)!.push(compiled);
    if (value) i += 2;
    const joiner = parts[i + 1];
    if (joiner === 'or') groups.push([]);
  }
  return {
    byTag,
    where: (db) => sql<SqlBool>`(${sql.join(
      groups.map((g) => sql`(${sql.join(g.map((t) => t(db)), sql` and `)})`),
      sql` or `,
    )})`,
  };
}

const expandable = new Set(['createdtime', 'changedtime', 'provisioningstate']);

/** The listing operations; `modules` are the app's areas (their `listedResources` queries). */
export function listingRules(ctx: AppContext, modules: readonly ServiceModule[]) {
  const store = new ResourcesStore(ctx.store.db, ctx.cache);
  return {
    /** `GET …/resources` at subscription or group scope. */
    async list(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const q = req.query as Record<string, string | undefined>;
      const subscriptionId = call.subscription!.subscriptionId;
      const group = params(req).resourceGroupName === undefined ? undefined : call.resourceGroup!.name;
      const filter = typeof q['$filter'] === 'string' && q['$filter'].trim() !== '' ? compileResourceFilter(q['$filter'], ctx.config.providerNamespaceAliases) : undefined;
      const expand = new Set<string>();
      for (const e of (typeof q['$expand'] === 'string' ? q['$expand'] : '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
        if (!expandable.has(e)) throw bad('$expand', `The value '${q['$expand']}' of '$expand' is invalid. Allowed values: createdTime, changedTime, provisioningState.`);
        expand.add(e);
      }
      const top = pageSizeOf(req);
      // At subscription scope, a caller with roles on some groups only lists theirs.
      const groups = group === undefined ? ((await readableGroups(ctx, call, subscriptionResourcesRead)) ?? [undefined]) : [group];
      const parts = groups.flatMap((g) => modules.flatMap((m) => (m.listedResources ? [m.listedResources(ctx.store.db, subscriptionId, g)] : [])));
      const rows = await store.listResources(parts, top + 1, skipTokenOf(req), filter?.where);
      const page = rows.slice(0, top);
      const value = page.map((r) => {
        const b = JSON.parse(r.body) as Record<string, any>;
        const out: Record<string, unknown> = { id: r.id, name: r.name, type: typeof b.type === 'string' ? b.type : r.type_lower };
        for (const k of ['sku', 'kind', 'managedBy', 'plan', 'identity', 'location', 'extendedLocation'] as const) if (b[k] !== undefined) out[k] = b[k];
        if (b.tags !== undefined && !filter?.byTag) out.tags = b.tags;
        if (expand.has('createdtime')) out.createdTime = r.created_at;
        if (expand.has('changedtime')) out.changedTime = r.updated_at;
        if (expand.has('provisioningstate')) out.provisioningState = b.properties?.provisioningState ?? 'Succeeded';
        return out;
      });
      const body: Record<string, unknown> = { value };
      if (rows.length > top) {
        const path = group === undefined ? `/subscriptions/${subscriptionId}/resources` : `/subscriptions/${subscriptionId}/resourceGroups/${group}/resources`;
        body.nextLink = absoluteUrl(ctx.origin(), path, { 'api-version': call.apiVersion, $filter: q['$filter'], $expand: q['$expand'], $top: q['$top'], $skiptoken: encodeToken({ a: page.at(-1)!.id_lower }) });
      }
      return body;
    },
  };
}
