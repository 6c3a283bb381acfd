/**
 * The users and mailboxes of `bench/real.ts`, written into a fresh store before the servers
 * start (a child process, run with tsx): the store named by the `STRATUS_*` environment (as
 * `stratus serve` reads it) is migrated and loaded with the demo data set, then gets `users`
 * directory users of the demo tenant (`bench-user-NN@stratus.test`, one password) and
 * `messages` generated messages each, by the bulk generator of `stratus seed mailbox`
 * (`src/services/mail/bulk.ts` `seedMailbox`). The code is the served checkout's own (argv
 * `stratusDir`), so its migrations are the served bundle's. Prints the users as one JSON line.
 *
 *   tsx bench/real-seed.ts '{"stratusDir":"…","users":50,"messages":200,"password":"…"}'
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What argv[2] holds. */
interface SeedArgs {
  stratusDir: string;
  users: number;
  messages: number;
  password: string;
}

/** One user made here. */
export interface SeededUser {
  id: string;
  upn: string;
}

const a = JSON.parse(process.argv[2]!) as SeedArgs;
const from = (rel: string) => import(pathToFileURL(path.join(a.stratusDir, rel)).href);
const { loadConfig } = await from('src/config.ts');
const { buildApp } = await from('src/app.ts');
const { hashSecret } = await from('src/core/identity/directory.ts');
const { seedMailbox } = await from('src/services/mail/bulk.ts');
const { demoTenant } = await from('src/seed/demo.ts');

const built = await buildApp({ ...loadConfig({}), httpsPort: -1, logLevel: 'silent' });
const made: SeededUser[] = [];
try {
  const store = built.ctx.store;
  const hash = await hashSecret(a.password);
  for (let i = 0; i < a.users; i++) {
    const upn = `bench-user-${String(i).padStart(2, '0')}@${demoTenant.domain}`;
    const user = { id: randomUUID(), tenantId: demoTenant.id, userPrincipalName: upn, displayName: `Bench User ${i}`, mail: upn, isTenantAdmin: false };
    await built.ctx.identity.directory.addUser(user, a.password, hash);
    // Planner statistics once, after the last mailbox (each `analyze` samples the whole table).
    await seedMailbox(store.db, user, a.messages, { seed: i + 1, analyze: i === a.users - 1, transaction: (fn: never) => store.transaction(fn) });
    made.push({ id: user.id, upn });
  }
} finally {
  await built.app.close();
}
process.stdout.write(JSON.stringify(made) + '\n');
