/**
 * The one shape of a directory collection read (users, groups, applications, service
 * principals): the read permission, `$filter` over the collection's fields, `$top` and
 * `$skiptoken`, `$count` when the collection counts, a keyset page, each row rendered.
 */
import type { Expression, SqlBool } from 'kysely';
import type { FieldMap } from '../../core/odata/index.ts';
import { allow, countAsked, filterOf, pageOf, sendPage, type DirRequest, type PermissionSet } from './request.ts';
import { pageRows } from './store.ts';

/** How one collection is read. */
export interface Collection<R extends { id: string }> {
  permissions: PermissionSet;
  fields: FieldMap;
  /** Resource name in errors (`User`) and type name in `$select` errors (`user`). */
  resource: string;
  type: string;
  /** `@odata.context` fragment (`users`). */
  fragment: string;
  /** Up to `limit` rows in id order after `after`, filtered. */
  rows(filter: Expression<SqlBool> | undefined, limit: number, after: string | undefined): Promise<R[]>;
  /** How many rows match (collections that answer `$count`). */
  count?(filter: Expression<SqlBool> | undefined): Promise<number>;
  /** The resource of a row. */
  render(row: R): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Items listed before the first page's rows (the built-in resource principals). */
  first?: Record<string, unknown>[];
}

/** Answers a page of `c`: 200 with `value`, `@odata.count` when asked, `@odata.nextLink` when more follow. @throws ApiError 400 / 403 */
export async function listCollection<R extends { id: string }>(dr: DirRequest, c: Collection<R>): Promise<unknown> {
  allow(dr, c.permissions, 'read');
  const filter = filterOf(dr, c.fields, c.resource);
  const { top, after } = pageOf(dr);
  const count = c.count && countAsked(dr) ? await c.count(filter) : undefined;
  const page = await pageRows((limit, a) => c.rows(filter, limit, a), top, after);
  const items = [...(after === undefined ? (c.first ?? []) : [])];
  for (const r of page.rows) items.push(await c.render(r));
  return sendPage(dr, c.fragment, items, c.type, page.next, count);
}
