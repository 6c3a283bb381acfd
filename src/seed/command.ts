/**
 * `stratus seed mailbox --user <upn> --messages <n>` and `stratus seed transactions
 * --billing-account <name> --invoice <name> --count <n>`: bulk data on demand (issue 9
 * item 11), written into the configured store (the same settings as `serve`) with a progress
 * bar on standard error. The store is migrated and loaded with the demo data set first when
 * it is new, exactly as `serve` would.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, type ConfigFlags } from '../config.ts';

/** Parses a positive integer option. @throws ConfigError */
function count(v: string, what: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 100_000_000) throw new ConfigError(`${what} must be an integer from 1 to 100000000, not '${v}'`);
  return Number(v);
}

/**
 * On SQLite, for this process only: commits without an fsync each (WAL with
 * `synchronous = NORMAL`: a power loss may drop the last batches, a crash of this process
 * loses nothing committed) and a 512 MiB page cache for the index updates.
 */
async function bulkPragmas(store: import('../store/db.ts').Store<import('../store/database.ts').Database>): Promise<void> {
  if (store.dialect !== 'sqlite') return;
  const { sql } = await import('kysely');
  await sql`pragma synchronous = NORMAL`.execute(store.db);
  await sql`pragma cache_size = -524288`.execute(store.db);
}

/**
 * PostgreSQL: waits, as a request of a server does before it is answered, until every live
 * instance serving the store has applied what this process wrote (issue 30 row 14): a marker
 * sequenced after the writes, acknowledged by each live instance (`CacheHub.settle`; gives up
 * after twice the lease, by when an instance that does not answer has lost its lease). So a
 * read sent to a running server after the command returned sees the command's writes.
 * No-op on SQLite (one process owns the file; a server reads the version rows every turn).
 */
export async function settleOutsideWrite(built: import('../app.ts').BuiltApp): Promise<void> {
  const { config, cache } = built.ctx;
  if (!config.databaseUrl) return;
  const { defaultSettings } = await import('../config.ts');
  await cache.settle(config.settings.instanceLeaseMs || defaultSettings.instanceLeaseMs, true);
}

/** Runs `fn` against the configured store with a progress bar over `total` items. */
async function withStore(flags: ConfigFlags, total: number, label: string, fn: (built: import('../app.ts').BuiltApp, tick: (done: number) => void) => Promise<void>): Promise<void> {
  const config = loadConfig(flags);
  const { buildApp } = await import('../app.ts');
  const { SingleBar, Presets } = (await import('cli-progress')).default;
  const built = await buildApp({ ...config, httpsPort: -1, logLevel: 'silent' });
  const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted}`, stream: process.stderr, hideCursor: true, etaBuffer: 20, noTTYOutput: true, notTTYSchedule: 5000 }, Presets.shades_classic);
  const started = Date.now();
  let shown = false;
  try {
    await fn(built, (done) => {
      if (!shown) bar.start(total, 0, { rate: 0 });
      shown = true;
      bar.update(done, { rate: Math.round(done / Math.max((Date.now() - started) / 1000, 0.001)) });
    });
    bar.stop();
    await settleOutsideWrite(built);
    process.stdout.write(`${label}: ${total} written in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    if (shown) bar.stop();
    await built.app.close();
  }
}

/**
 * Adds the `seed` command and its subcommands to `program`; `storeFlags` adds the flags that
 * name the store (`--data-dir`, `--database-url`).
 */
export function addSeedCommand(program: Command, storeFlags: (cmd: Command) => Command): void {
  const seed = program.command('seed').description('add bulk data to the store (large mailboxes, invoice transactions)');
  storeFlags(seed.command('mailbox').description("add generated messages to a user's mailbox"))
    .requiredOption('--user <upn>', 'user principal name or object id of the mailbox owner')
    .requiredOption('--messages <n>', 'number of messages to add')
    .option('--seed <n>', 'random seed of the content', '7')
    .action(async (flags: ConfigFlags & { user: string; messages: string; seed: string }) => {
      const n = count(flags.messages, '--messages');
      await withStore(flags, n, 'messages', async (built, tick) => {
        const user = await built.ctx.identity.directory.findUser(flags.user);
        if (!user) throw new ConfigError(`no user '${flags.user}'`);
        const { seedMailbox } = await import('../services/mail/bulk.ts');
        const store = built.ctx.store;
        await bulkPragmas(store);
        await seedMailbox(store.db, user, n, { seed: Number(flags.seed) || 7, onProgress: tick, transaction: (fn) => store.transaction(fn) });
      });
    });
  storeFlags(seed.command('transactions').description('add generated transactions to an invoice of a billing account'))
    .requiredOption('--billing-account <name>', 'billing account name (e.g. 70000001)')
    .requiredOption('--invoice <name>', 'invoice name (e.g. G000000001)')
    .requiredOption('--count <n>', 'number of transactions to add')
    .option('--seed <n>', 'random seed of the content', '11')
    .action(async (flags: ConfigFlags & { billingAccount: string; invoice: string; count: string; seed: string }) => {
      const n = count(flags.count, '--count');
      await withStore(flags, n, 'transactions', async (built, tick) => {
        const { seedTransactions } = await import('../services/billing/bulk.ts');
        const store = built.ctx.store;
        await bulkPragmas(store);
        try {
          await seedTransactions(store.db, flags.billingAccount, flags.invoice, n, { seed: Number(flags.seed) || 11, onProgress: tick, transaction: (fn) => store.transaction(fn) });
        } catch (e) {
          if (/^no (invoice|billing)/.test((e as Error).message)) throw new ConfigError((e as Error).message);
          throw e;
        }
      });
    });
}
