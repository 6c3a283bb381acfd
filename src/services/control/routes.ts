/**
 * The control plane (ours, not the spec's): `GET /_stratus/health`, `POST /_stratus/reset`,
 * `GET|POST /_stratus/clock`, the snapshots (`world-routes.ts`), `GET /_stratus/mail/outbound`, the fault rules
 * `POST|GET|DELETE /_stratus/faults`, `DELETE /_stratus/faults/{id}`, and the directory changes
 * `POST /_stratus/directory/users/{id or upn}/password`, `POST /_stratus/directory/apps/{client id}/secret`.
 * Errors are RFC 9457 problem+json. Every route but health needs the control key (core/control-key.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext, ServiceModule } from '../../context.ts';
import { nowIso, offset } from '../../core/clock.ts';
import { moveClock, resetWorld } from '../../world/shared.ts';
import { registerWorldRoutes } from './world-routes.ts';
import { errors } from '../../core/errors/index.ts';
import { listOutboundMail } from '../mail/outbound.ts';
import { demoTenant } from '../../seed/demo.ts';
import { faultFamilies, type FaultRuleInput } from '../../core/faults.ts';
import { maxGlobLength } from '../../core/glob.ts';

/** Body of `POST /_stratus/clock`: `advanceSeconds` (negative moves back) or `now` (an absolute time, also in the past). */
const ClockMove = Type.Object(
  {
    advanceSeconds: Type.Optional(Type.Number({ minimum: -100 * 365 * 86400, maximum: 100 * 365 * 86400 })),
    now: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

/** Query of `GET /_stratus/mail/outbound`. */
const OutboundQuery = Type.Object({ tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })), top: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

/** Body of `POST /_stratus/faults` (issue 12 item 2). */
const FaultRuleBody = Type.Object(
  {
    match: Type.Optional(
      Type.Object(
        {
          family: Type.Optional(Type.Union(faultFamilies.map((f) => Type.Literal(f)))),
          method: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z]+$' })),
          path: Type.Optional(Type.String({ minLength: 1, maxLength: maxGlobLength })),
        },
        { additionalProperties: false },
      ),
    ),
    effect: Type.Union([
      Type.Object({ status: Type.Literal(429), retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86400 })) }, { additionalProperties: false }),
      Type.Object({ status: Type.Union([Type.Literal(500), Type.Literal(503)]), retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86400 })) }, { additionalProperties: false }),
      Type.Object({ delayMs: Type.Integer({ minimum: 0, maximum: 120_000 }) }, { additionalProperties: false }),
      Type.Object({ reset: Type.Literal(true) }, { additionalProperties: false }),
    ]),
    probability: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    count: Type.Optional(Type.Integer({ minimum: 1 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 })),
  },
  { additionalProperties: false },
);

/** Body of `POST /_stratus/directory/users/{user}/password`. */
const PasswordChange = Type.Object({ password: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

/** Body of `POST /_stratus/directory/apps/{appId}/secret`. */
const SecretChange = Type.Object({ secret: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

/**
 * The move a clock body asks for.
 * @throws errors.control.invalidClockMove for neither or both fields, or a time that does not parse or is out of range.
 */
function clockTarget(b: Static<typeof ClockMove>): { epochMs: number } | { deltaMs: number } {
  if ((b.advanceSeconds === undefined) === (b.now === undefined)) throw errors.control.invalidClockMove({ message: "Give exactly one of 'advanceSeconds' (a number, negative moves back) and 'now' (an ISO 8601 time)." });
  if (b.advanceSeconds !== undefined) return { deltaMs: b.advanceSeconds * 1000 };
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(b.now!) ? Date.parse(b.now!) : NaN;
  if (!Number.isFinite(at) || at < Date.UTC(1970, 0, 2) || at > Date.UTC(9999, 0, 1)) throw errors.control.invalidClockMove({ message: `'${b.now}' is not an ISO 8601 time with a zone (e.g. 2026-01-01T09:00:00Z) between 1970 and 9999.` });
  return { epochMs: at };
}

/** Registers the control-plane routes. */
export function registerControlRoutes(app: FastifyInstance, ctx: AppContext, modules: ServiceModule[]): void {
  registerWorldRoutes(app, ctx, modules);
  app.get('/_stratus/health', async () => ({
    status: 'ok',
    store: ctx.store.dialect,
    time: nowIso(),
    origin: ctx.origin(),
  }));

  app.post('/_stratus/reset', async () => {
    await resetWorld(ctx, modules);
    return { status: 'ok', reset: true };
  });

  app.post('/_stratus/faults', { schema: { body: FaultRuleBody } }, async (req, reply) => {
    const rule = ctx.faults.add(req.body as FaultRuleInput, nowIso());
    return reply.code(201).header('Location', `${ctx.origin()}/_stratus/faults/${rule.id}`).send(rule);
  });
  app.get('/_stratus/faults', async () => ({ value: ctx.faults.list() }));
  app.delete('/_stratus/faults', async (_req, reply) => {
    ctx.faults.clear();
    return reply.code(204).send();
  });
  app.delete('/_stratus/faults/:id', async (req, reply) => {
    if (!ctx.faults.remove((req.params as { id: string }).id)) throw errors.control.faultRuleNotFound();
    return reply.code(204).send();
  });

  app.get('/_stratus/clock', async () => ({ now: nowIso(), offsetMs: offset() }));

  // Shared by every instance of the store (world/shared.ts); the answer waits until the live ones apply it.
  app.post('/_stratus/clock', { schema: { body: ClockMove } }, async (req) => {
    await moveClock(ctx, clockTarget(req.body as Static<typeof ClockMove>));
    return { now: nowIso(), offsetMs: offset() };
  });

  /**
   * Mail sent to recipients outside the tenant, recorded as delivered outbound (issue 5),
   * newest first. `?tenant=<id or domain>` (default: the demo tenant), `?top=` (1–1000).
   */
  app.get('/_stratus/mail/outbound', { schema: { querystring: OutboundQuery } }, async (req) => {
    const q = req.query as Static<typeof OutboundQuery>;
    const tenant = await ctx.identity.directory.findTenant(q.tenant ?? demoTenant.id);
    if (!tenant) throw errors.control.tenantNotFound({ tenant: String(q.tenant) });
    return { tenantId: tenant.id, value: await listOutboundMail(ctx, tenant.id, q.top ?? 1000) };
  });

  /** Sets a user's password (user by object id or UPN) and revokes the user's refresh tokens (issue 10). 204; 404 for no such user. */
  app.post('/_stratus/directory/users/:user/password', { schema: { body: PasswordChange } }, async (req, reply) => {
    const { user } = req.params as { user: string };
    const found = await ctx.identity.directory.findUser(user);
    if (!found || !(await ctx.identity.changePassword(found.id, (req.body as Static<typeof PasswordChange>).password))) throw errors.control.userNotFound({ user });
    return reply.code(204).send();
  });

  /** Sets an application's client secret and revokes the refresh tokens issued to it (issue 10). 204; 404 for no such app. */
  app.post('/_stratus/directory/apps/:appId/secret', { schema: { body: SecretChange } }, async (req, reply) => {
    const { appId } = req.params as { appId: string };
    const found = await ctx.identity.directory.findApp(appId);
    if (!found || !(await ctx.identity.changeClientSecret(found.appId, (req.body as Static<typeof SecretChange>).secret))) throw errors.control.appNotFound({ appId });
    return reply.code(204).send();
  });
}
