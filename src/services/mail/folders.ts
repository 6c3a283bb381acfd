/**
 * Mail folders (reference mail.md §4): list (children of `msgfolderroot`, hidden ones with
 * `includeHiddenFolders=true`), get, create, rename, delete (into Deleted Items), copy and
 * move, with counts computed in SQL so they always agree with the messages.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { newFolderId } from './ids.ts';
import { copyMessage, folderCounts, getFolder, messageFromRow, type FolderRow, type Mailbox } from './store.ts';
import type { Database } from '../../store/database.ts';

/** The JSON of a folder with its counts. */
export function renderFolder(f: FolderRow, c: { total: number; unread: number; children: number }): Record<string, unknown> {
  return { id: f.id, displayName: f.displayName, parentFolderId: f.parentId, childFolderCount: c.children, unreadItemCount: c.unread, totalItemCount: c.total, isHidden: f.isHidden };
}

/** Renders folders with their counts (two grouped queries for the whole list). */
export async function renderFolders(db: Kysely<Database>, mb: Mailbox, folders: FolderRow[]): Promise<Record<string, unknown>[]> {
  const counts = await folderCounts(db, mb, folders.map((f) => f.id));
  return folders.map((f) => renderFolder(f, counts.get(f.id)!));
}

function displayName(input: unknown, required: boolean): string | undefined {
  const o = (input ?? {}) as Record<string, unknown>;
  if (typeof input !== 'object' || Array.isArray(input) || Buffer.isBuffer(input)) throw errors.mail.folderBodyNotObject();
  for (const k of Object.keys(o)) {
    if (!['displayName', 'isHidden', '@odata.type', 'id', 'parentFolderId', 'childFolderCount', 'unreadItemCount', 'totalItemCount'].includes(k)) {
      throw errors.mail.unknownProperty({ property: k, type: 'vendor.graph.mailFolder' });
    }
  }
  const n = o.displayName;
  if (n === undefined && !required) return undefined;
  if (typeof n !== 'string' || n.trim() === '' || n.length > 255) throw errors.mail.folderNameRequired();
  return n;
}

async function assertFreeName(db: Kysely<Database>, mb: Mailbox, parentId: string, name: string, except?: string): Promise<void> {
  let q = db.selectFrom('mail_folders').select('id').where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('parent_id', '=', parentId).where('display_name', '=', name);
  if (except) q = q.where('id', '<>', except);
  if (await q.executeTakeFirst()) throw errors.mail.folderExists();
}

/** Creates a child folder. @throws ApiError 400, 409 `ErrorFolderExists` */
export async function createFolder(db: Kysely<Database>, mb: Mailbox, parent: FolderRow, input: unknown): Promise<FolderRow> {
  const name = displayName(input, true)!;
  await assertFreeName(db, mb, parent.id, name);
  const hidden = (input as Record<string, unknown>).isHidden === true;
  const f: FolderRow = { id: newFolderId(), tenantId: mb.tenantId, mailboxId: mb.mailboxId, parentId: parent.id, wellKnown: null, displayName: name, isHidden: hidden };
  await db.insertInto('mail_folders').values({ id: f.id, tenant_id: f.tenantId, mailbox_id: f.mailboxId, parent_id: f.parentId, well_known: null, display_name: name, is_hidden: hidden ? 1 : 0, created_at: nowIso() }).execute();
  return f;
}

/** Renames a folder. @throws ApiError 403 for a well-known folder, 409 for a taken name */
export async function updateFolder(db: Kysely<Database>, mb: Mailbox, f: FolderRow, input: unknown): Promise<FolderRow> {
  const name = displayName(input, false);
  if (name === undefined) return f;
  if (f.wellKnown) throw errors.mail.distinguishedFolder({ action: 'renamed' });
  await assertFreeName(db, mb, f.parentId!, name, f.id);
  await db.updateTable('mail_folders').set({ display_name: name }).where('id', '=', f.id).execute();
  return { ...f, displayName: name };
}

async function isDescendant(db: Kysely<Database>, mb: Mailbox, candidate: FolderRow, ancestorId: string): Promise<boolean> {
  let cur: string | null = candidate.id;
  for (let i = 0; cur && i < 64; i++) {
    if (cur === ancestorId) return true;
    const r: any = await db.selectFrom('mail_folders').select('parent_id').where('id', '=', cur).where('tenant_id', '=', mb.tenantId).executeTakeFirst();
    cur = r?.parent_id ?? null;
  }
  return false;
}

/** Moves a folder under `dest` (its messages keep their ids). @throws ApiError 403, 400 `ErrorMoveCopyFailed`, 409 */
export async function moveFolder(db: Kysely<Database>, mb: Mailbox, f: FolderRow, dest: FolderRow): Promise<FolderRow> {
  if (f.wellKnown) throw errors.mail.distinguishedFolder({ action: 'moved' });
  if (await isDescendant(db, mb, dest, f.id)) throw errors.mail.folderIntoItself({ action: 'moved' });
  await assertFreeName(db, mb, dest.id, f.displayName, f.id);
  await db.updateTable('mail_folders').set({ parent_id: dest.id }).where('id', '=', f.id).execute();
  return { ...f, parentId: dest.id };
}

/** Copies a folder, its messages and its subfolders under `dest`. */
export async function copyFolder(db: Kysely<Database>, mb: Mailbox, f: FolderRow, dest: FolderRow): Promise<FolderRow> {
  if (await isDescendant(db, mb, dest, f.id)) throw errors.mail.folderIntoItself({ action: 'copied' });
  await assertFreeName(db, mb, dest.id, f.displayName);
  const copy = await createFolder(db, mb, dest, { displayName: f.displayName, isHidden: f.isHidden });
  const rows = await db.selectFrom('mail_messages').selectAll().where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('folder_id', '=', f.id).orderBy('pk').execute();
  for (const r of rows) await copyMessage(db, messageFromRow(r), { tenantId: mb.tenantId, mailboxId: mb.mailboxId, folderId: copy.id });
  const kids = await db.selectFrom('mail_folders').select('id').where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('parent_id', '=', f.id).execute();
  for (const k of kids as any[]) await copyFolder(db, mb, await getFolder(db, mb, k.id), copy);
  return copy;
}

/** Deletes a folder: moves it into Deleted Items (a folder already there is removed with its contents). */
export async function deleteFolder(db: Kysely<Database>, mb: Mailbox, f: FolderRow): Promise<void> {
  if (f.wellKnown) throw errors.mail.deleteDistinguishedFolder();
  const deleted = await getFolder(db, mb, 'deleteditems');
  if (f.parentId !== deleted.id) {
    const clash = await db.selectFrom('mail_folders').select('id').where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('parent_id', '=', deleted.id).where('display_name', '=', f.displayName).executeTakeFirst();
    if (!clash) {
      await db.updateTable('mail_folders').set({ parent_id: deleted.id }).where('id', '=', f.id).execute();
      return;
    }
  }
  // Already in Deleted Items (or a name clash there): move its messages to the purges folder and drop the folder tree.
  const purge = async (id: string): Promise<void> => {
    const kids = await db.selectFrom('mail_folders').select('id').where('tenant_id', '=', mb.tenantId).where('parent_id', '=', id).execute();
    for (const k of kids as any[]) await purge(k.id);
    const msgs = await db.selectFrom('mail_messages').selectAll().where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('folder_id', '=', id).execute();
    const { moveMessage } = await import('./store.ts');
    for (const r of msgs) await moveMessage(db, messageFromRow(r), mb.wellKnown.get('recoverableitemspurges')!, { hidden: true });
    await db.deleteFrom('mail_folders').where('id', '=', id).execute();
    await db.deleteFrom('mail_folder_counts').where('folder_id', '=', id).execute();
  };
  await purge(f.id);
}
