import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { listMessageRows, countMessages } from '../src/services/mail/query.ts';
const database = new SQLite(process.argv[2]!, { readonly: true });
const db = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
const u = database.prepare("select id, tenant_id from directory_users where upn_lower='admin@stratus.test'").get() as any;
const excl = (database.prepare("select id from mail_folders where mailbox_id=? and well_known in ('root','msgfolderroot','recoverableitemsroot','recoverableitemsdeletions','recoverableitemspurges','recoverableitemsversions')").all(u.id) as any[]).map((r) => r.id);
for (const qs of ['$search="onyxbeacon"', '$search="zyxwvut"', '$search="invoice"', '$search="onyxbeacon"&$skip=1000', '$count=true', '$filter=isRead eq false']) {
  const lq = { tenantId: u.tenant_id, mailboxId: u.id, excludeFolderIds: excl, q: new URLSearchParams(qs), pageSize: 10, skip: Number(new URLSearchParams(qs).get('$skip') ?? 0) };
  const ts: number[] = [];
  let n = 0;
  for (let i = 0; i < 7; i++) { const t = performance.now(); n = (await listMessageRows(db, lq)).rows.length; ts.push(performance.now() - t); }
  const tc: number[] = [];
  let c = 0;
  for (let i = 0; i < 5; i++) { const t = performance.now(); c = await countMessages(db, lq); tc.push(performance.now() - t); }
  ts.sort((a, b) => a - b); tc.sort((a, b) => a - b);
  console.log(`${qs}: page(${n}) median ${ts[3]!.toFixed(2)} ms; count ${c} median ${tc[2]!.toFixed(2)} ms`);
}
const c = await (async () => { const k = db.selectFrom('mail_messages').select('pk'); return k; })();
void c;
