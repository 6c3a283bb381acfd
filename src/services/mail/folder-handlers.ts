/**
 * Folder handlers (reference mail.md §4): list and create child folders, get, rename and
 * delete a folder, copy and move it. Each checks the method's permission, runs its writes in
 * one transaction and renders the folder with its counts.
 */
import { errors } from '../../core/errors/index.ts';
import { getFolder, listChildFolders, type FolderRow } from './store.ts';
import * as folders from './folders.ts';
import { renderFolders } from './folders.ts';
import { keySegment } from './paths.ts';
import { contextUrl, destinationId, need, nextLink, paging, send, type MailRequest } from './request.ts';

/** `mailFolders` or `…/childFolders`: GET lists the children of `parent` (paged), POST creates one. @throws ApiError 405 for other methods */
export async function folderChildren(mr: MailRequest, method: string, parent: FolderRow): Promise<unknown> {
  const db = mr.ctx.store.db;
  if (method === 'GET') {
    need(mr, 'read');
    const { pageSize, skip } = paging(mr);
    const includeHidden = (mr.q.get('includeHiddenFolders') ?? '').toLowerCase() === 'true';
    const rows = await listChildFolders(db, mr.mb, parent.id, { includeHidden, top: pageSize + 1, skip });
    const body: Record<string, unknown> = { '@odata.context': contextUrl(mr, parent.wellKnown === 'msgfolderroot' ? 'mailFolders' : `${keySegment('mailFolders', parent.id)}/childFolders`), value: await renderFolders(db, mr.mb, rows.slice(0, pageSize)) };
    if (rows.length > pageSize) body['@odata.nextLink'] = nextLink(mr, skip + pageSize);
    return send(mr, 200, body);
  }
  if (method === 'POST') {
    need(mr, 'write');
    const f = await mr.ctx.store.transaction((trx) => folders.createFolder(trx, mr.mb, parent, mr.body));
    return send(mr, 201, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [f]))[0] });
  }
  throw errors.mail.methodNotAllowedHere({ method });
}

/** `mailFolders/{id}`: GET, PATCH (rename), DELETE (into Deleted Items). @throws ApiError 405 for other methods */
export async function folderItem(mr: MailRequest, method: string, folder: FolderRow): Promise<unknown> {
  const db = mr.ctx.store.db;
  if (method === 'GET') {
    need(mr, 'read');
    return send(mr, 200, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [folder]))[0] });
  }
  if (method === 'PATCH') {
    need(mr, 'write');
    const f = await folders.updateFolder(db, mr.mb, folder, mr.body);
    return send(mr, 200, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [f]))[0] });
  }
  if (method === 'DELETE') {
    need(mr, 'write');
    await mr.ctx.store.transaction((trx) => folders.deleteFolder(trx, mr.mb, folder));
    return send(mr, 204);
  }
  throw errors.mail.methodNotAllowedHere({ method });
}

/** `mailFolders/{id}/copy` and `…/move` (POST, `destinationId` in the body). @throws ApiError 405 for other methods */
export async function copyOrMoveFolder(mr: MailRequest, method: string, folder: FolderRow, action: 'copy' | 'move'): Promise<unknown> {
  if (method !== 'POST') throw errors.mail.methodNotAllowedHere({ method });
  need(mr, 'write');
  const db = mr.ctx.store.db;
  const dest = await getFolder(db, mr.mb, destinationId(mr.body));
  const out = await mr.ctx.store.transaction((trx) => (action === 'copy' ? folders.copyFolder(trx, mr.mb, folder, dest) : folders.moveFolder(trx, mr.mb, folder, dest)));
  return send(mr, 201, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [out]))[0] });
}
