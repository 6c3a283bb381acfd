/**
 * The one shape of a directory collection read (users, groups, applications, service
 * principals): the read permission, `$filter` over the collection's fields, `$orderby` where
 * the collection sorts (then offset pages), `$top` and `$skiptoken`, `$count` when the
 * collection counts, a keyset page in id order otherwise, each row rendered.
 */
import type { Expression, SqlBool } from 'kysely';
import type { FieldMap } from '../../core/odata/index.ts';
import { allow, countAsked, filterOf, orderOf, pageOf, sendPage, type DirRequest, type PermissionSet } from './request.ts';
import { pageRows, type Window } from './store.ts';

/** How one collection is read. */
export interface Collection<R extends { id: string }> {
  permissions: PermissionSet;
  fields: FieldMap;
  /** Resource name in errors (`User`) and type name in `$select` errors (`user`). */
  resource: string;
  type: string;
  /** `@odata.context` fragment (`users`). */
  fragment: string;
  /** The rows of a window, filtered. */
  rows(filter: Expression<SqlBool> | undefined, w: Window): Promise<R[]>;
  /** Whether `$orderby` (over `fields`) is answered; otherwise it is refused as unsupported. */
  sortable?: boolean;
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
  const { top, after, skip } = pageOf(dr);
  const order = c.sortable ? orderOf(dr, c.fields, c.resource) : orderOf(dr, {}, c.resource);
  const count = c.count && countAsked(dr) ? await c.count(filter) : undefined;
  const page = await pageRows((w) => c.rows(filter, w), top, { after: order ? undefined : after, skip: order ? skip : undefined, order });
  const items = [...(after === undefined && !skip ? (c.first ?? []) : [])];
  for (const r of page.rows) items.push(await c.render(r));
  return sendPage(dr, c.fragment, items, c.type, page.next, count);
}
