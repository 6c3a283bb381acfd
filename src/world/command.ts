/**
 * `stratus snapshot save|list|restore|delete <name>` (issue 28 item 4) and
 * `stratus world export [--out <file>]` / `stratus world import <file>` (item 3): on the
 * configured store (the same settings as `serve`), without a running server. Every instance on
 * the store follows a restore or an import at its next request (`docs/worlds.md`).
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, type ConfigFlags } from '../config.ts';

/** Runs `fn` with the app built on the configured store (no listener). */
async function withApp(flags: ConfigFlags, fn: (built: import('../app.ts').BuiltApp) => Promise<void>): Promise<void> {
  const config = loadConfig(flags);
  const { buildApp } = await import('../app.ts');
  const built = await buildApp({ ...config, httpsPort: -1, logLevel: 'silent' });
  try {
    await fn(built);
  } finally {
    await built.app.close();
  }
}

/** Adds `snapshot` and its subcommands to `program`; `storeFlags` adds the flags that name the store. */
export function addSnapshotCommand(program: Command, storeFlags: (cmd: Command) => Command): void {
  const snap = program.command('snapshot').description('save, list, restore and delete snapshots of the whole store');
  const named = (name: string, what: string, run: (built: import('../app.ts').BuiltApp, name: string) => Promise<string>) =>
    storeFlags(snap.command(`${name} <name>`).description(what)).action(async (n: string, flags: ConfigFlags) => {
      const { snapshotNamePattern } = await import('./snapshots.ts');
      if (!snapshotNamePattern.test(n)) throw new ConfigError(`'${n}' is not a snapshot name (1–64 of A-Z a-z 0-9 . _ -)`);
      await withApp(flags, async (built) => {
        process.stdout.write((await run(built, n)) + '\n');
      });
    });
  const mods = async () => (await import('../services/index.ts')).modules;
  named('save', 'save the current state under a name', async (built, n) => {
    const { Snapshots } = await import('./snapshots.ts');
    const s = await new Snapshots(built.ctx.store, await mods()).save(n);
    return `saved ${s.name}: ${s.rows} rows at ${s.clock}`;
  });
  named('restore', 'restore a snapshot (rows, clock, caches of every instance)', async (built, n) => {
    const { restoreSnapshot } = await import('./shared.ts');
    await restoreSnapshot(built.ctx, await mods(), n);
    return `restored ${n}`;
  });
  named('delete', 'delete a snapshot', async (built, n) => {
    const { Snapshots } = await import('./snapshots.ts');
    await new Snapshots(built.ctx.store, await mods()).delete(n);
    return `deleted ${n}`;
  });
  storeFlags(snap.command('list').description('list the snapshots')).action(async (flags: ConfigFlags) => {
    await withApp(flags, async (built) => {
      const { Snapshots } = await import('./snapshots.ts');
      for (const s of await new Snapshots(built.ctx.store, await mods()).list()) process.stdout.write(`${s.name}\t${s.createdAt}\t${s.rows} rows\n`);
    });
  });
}

/** Adds `world export` and `world import` to `program`. */
export function addWorldCommand(program: Command, storeFlags: (cmd: Command) => Command): void {
  const world = program.command('world').description('export the store as a world file, or replace it with one');
  storeFlags(world.command('export').description('write the current state as a world file (YAML; JSON when --out ends in .json)'))
    .option('--out <file>', 'file to write (default: standard output)')
    .action(async (flags: ConfigFlags & { out?: string }) => {
      await withApp(flags, async (built) => {
        const { exportWorld } = await import('./export.ts');
        const doc = await exportWorld(built.ctx.store.db);
        const text = flags.out?.endsWith('.json') ? JSON.stringify(doc, null, 2) + '\n' : (await import('yaml')).stringify(doc, { lineWidth: 0 });
        if (flags.out) (await import('node:fs')).writeFileSync(flags.out, text);
        else process.stdout.write(text);
      });
    });
  storeFlags(world.command('import <file>').description('replace the whole state with a world file (kept as what a reset restores)')).action(async (file: string, flags: ConfigFlags) => {
    const { readWorld } = await import('./file.ts');
    const parsed = readWorld([file]);
    await withApp(flags, async (built) => {
      const { applyWorld } = await import('./start.ts');
      await applyWorld(built.ctx, await (async () => (await import('../services/index.ts')).modules)(), parsed);
      process.stdout.write(`imported ${file}\n`);
    });
  });
}
