/**
 * The snapshot routes of the control plane (issue 28 item 4; `docs/worlds.md`):
 * `POST /_stratus/snapshots {"name"}` → 201, `GET /_stratus/snapshots`,
 * `POST /_stratus/snapshots/{name}/restore` → 200, `DELETE /_stratus/snapshots/{name}` → 204.
 * Snapshots are kept in the store, so every instance on PostgreSQL lists and restores the same.
 * And the world itself (item 3): `GET /_stratus/world` (JSON; YAML with `?format=yaml` or
 * `Accept: application/yaml`), `PUT /_stratus/world` (a world file as JSON or YAML) → 200.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext, ServiceModule } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { Snapshots, snapshotNamePattern } from '../../world/snapshots.ts';
import { restoreSnapshot } from '../../world/shared.ts';
import { exportWorld } from '../../world/export.ts';
import { readWorld, WorldError } from '../../world/file.ts';
import { applyWorld } from '../../world/start.ts';
import { stringify } from 'yaml';

/** Body of `POST /_stratus/snapshots`. */
const SnapshotBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** The snapshot name of a path or body. @throws errors.control.invalidSnapshotName */
function snapshotName(name: string): string {
  if (!snapshotNamePattern.test(name)) throw errors.control.invalidSnapshotName({ name: name.slice(0, 100) });
  return name;
}

/** Registers the snapshot routes. */
export function registerWorldRoutes(app: FastifyInstance, ctx: AppContext, modules: ServiceModule[]): void {
  const snapshots = new Snapshots(ctx.store, modules);

  app.post('/_stratus/snapshots', { schema: { body: SnapshotBody } }, async (req, reply) => {
    const name = snapshotName((req.body as Static<typeof SnapshotBody>).name);
    const saved = await snapshots.save(name);
    return reply.code(201).header('Location', `${ctx.origin()}/_stratus/snapshots/${encodeURIComponent(name)}`).send(saved);
  });

  app.get('/_stratus/snapshots', async () => ({ value: await snapshots.list() }));

  app.post('/_stratus/snapshots/:name/restore', async (req) => {
    const name = snapshotName((req.params as { name: string }).name);
    await restoreSnapshot(ctx, modules, name);
    return { status: 'ok', restored: name, now: nowIso() };
  });

  app.delete('/_stratus/snapshots/:name', async (req, reply) => {
    await snapshots.delete(snapshotName((req.params as { name: string }).name));
    return reply.code(204).send();
  });

  app.get('/_stratus/world', async (req, reply) => {
    const doc = await exportWorld(ctx.store.db);
    const q = req.query as { format?: string };
    const yaml = q.format === 'yaml' || (q.format === undefined && /\b(application|text)\/(x-)?yaml\b/.test(req.headers.accept ?? ''));
    reply.header('Content-Disposition', `attachment; filename="world.${yaml ? 'yaml' : 'json'}"`);
    if (yaml) return reply.type('application/yaml; charset=utf-8').send(stringify(doc, { lineWidth: 0 }));
    return doc;
  });

  void app.register(async (scope) => {
    scope.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
    // A world with mailboxes is larger than the control plane's 1 MiB body limit: the app's 150 MiB.
    scope.put('/_stratus/world', { bodyLimit: 150 * 1024 * 1024 }, async (req) => {
      const text = typeof req.body === 'string' ? req.body : JSON.stringify(req.body ?? null);
      try {
        await applyWorld(ctx, modules, readWorld(['request body'], [text]));
      } catch (e) {
        if (e instanceof WorldError) throw errors.control.invalidWorld({ message: e.message });
        throw e;
      }
      return { status: 'ok', imported: true, now: nowIso() };
    });
  });
}
