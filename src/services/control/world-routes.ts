/**
 * The snapshot routes of the control plane (issue 28 item 4; `docs/worlds.md`):
 * `POST /_stratus/snapshots {"name"}` → 201, `GET /_stratus/snapshots`,
 * `POST /_stratus/snapshots/{name}/restore` → 200, `DELETE /_stratus/snapshots/{name}` → 204.
 * Snapshots are kept in the store, so every instance on PostgreSQL lists and restores the same.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext, ServiceModule } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { Snapshots, snapshotNamePattern } from '../../world/snapshots.ts';
import { restoreSnapshot } from '../../world/shared.ts';

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
}
