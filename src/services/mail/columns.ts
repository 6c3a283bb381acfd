/**
 * Light pages of the mail list (issue 9): a page whose `$select` names only properties a
 * message row holds in its own columns reads those columns, not the stored document.
 */
import { messageRowColumns } from './store.ts';

/**
 * The `mail_messages` columns each `$select` name (lower case) is rendered from when a page
 * selects only such names: the row's own columns, not its stored document (1–2 KB of JSON a
 * row, most of a page's cost). The id, immutable id and change key (`@odata.etag`) are always read.
 */
const rowPropertyColumns: Record<string, readonly (typeof messageRowColumns[number] | 'subject')[]> = {
  id: [],
  createddatetime: ['created_at'],
  lastmodifieddatetime: ['modified_at'],
  changekey: [],
  receiveddatetime: ['received_at'],
  sentdatetime: ['sent_at'],
  hasattachments: ['has_attachments'],
  parentfolderid: ['folder_id'],
  isread: ['is_read'],
  isdraft: ['is_draft'],
  weblink: [],
  subject: ['subject'],
};

/** `$select` names (lower case) a page can render from the rows' own columns (see {@link lightMessageColumns}). */
export const rowProperties: ReadonlySet<string> = new Set(Object.keys(rowPropertyColumns));

/**
 * The table-qualified columns a page selecting only {@link rowProperties} reads: the id, the
 * immutable id, the change key and what the selected names need. The other fields of the
 * records made from them ({@link messageFromRow}) are not rendered.
 */
export function lightMessageColumns(select: readonly string[]): string[] {
  const cols = new Set<string>(['id', 'immutable_id', 'change_key']);
  for (const name of select) for (const c of rowPropertyColumns[name] ?? []) cols.add(c);
  return [...cols].map((c) => `mail_messages.${c}`);
}
