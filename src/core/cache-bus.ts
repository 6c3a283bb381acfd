/**
 * Wake-up signals for background workers (issue 9 item 5): a writer calls {@link signal} with a
 * topic (`mail`: a mail change or a subscription change); every instance's {@link SignalBus}
 * tells its listeners, which then look for work instead of polling.
 *
 * - SQLite (one process): an in-process event, emitted right away. A listener's queries run on
 *   the same single connection, so they see the write once its transaction has committed.
 * - PostgreSQL: `pg_notify('stratus_<schema>', topic)` through the writer's handle, so inside a
 *   transaction it is delivered when (and only if) the transaction commits, to every instance
 *   sharing the schema (this one included). The instance's live-instances connection
 *   (`cache-presence.ts`) `LISTEN`s on the bus's channel too and relays its signals
 *   ({@link SignalBus.relay}); without one (a lease of 0) the bus holds a dedicated client that
 *   `LISTEN`s. Either reconnects after a connection loss and then signals every topic once (a
 *   notification sent while it was away is not lost: listeners re-check). One listening
 *   connection an instance, not two (issue 31): PostgreSQL wakes every listening backend of the
 *   database for every notification, whatever its channel.
 *
 * Signals say "look again", never carry data; a listener must tolerate spurious wake-ups.
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../store/db.ts';

/** Topics a writer can signal. */
export type SignalTopic = 'mail';
const topics: SignalTopic[] = ['mail'];

/** The bus's channel for the store's schema. */
export const signalChannel = (schema: string) => `stratus_${schema}`;

/** In-process signals (SQLite): every bus of this process hears them. */
const local = new EventEmitter();
local.setMaxListeners(0);

/**
 * Signals `topic` to every instance. Pass the write's transaction (PostgreSQL: delivered on commit).
 * @throws the database error of `pg_notify`.
 */
export async function signal<DB>(db: Kysely<DB>, topic: SignalTopic): Promise<void> {
  if (isPostgres(db)) await sql`select pg_notify('stratus_' || current_schema(), ${topic})`.execute(db);
  else local.emit(topic);
}

/**
 * A dedicated client of the store's database (search path `databaseSchema`) that `LISTEN`s on
 * each of `channels(<its current schema>)` (called before the first `LISTEN`, so before any
 * notification); `setup` attaches the caller's handlers before it connects; `settings` are more
 * `-c name=value` options of the session. Used by {@link SignalBus} and by `cache-presence.ts`.
 * @throws the error of connecting or listening (the client is then ended).
 */
export async function listeningClient(databaseUrl: string, databaseSchema: string | undefined, channels: (schema: string) => string[], setup: (client: pg.Client) => void, settings = ''): Promise<pg.Client> {
  // Named so that an operator (or a test) can tell the listeners of one schema in `pg_stat_activity`.
  const options = [databaseSchema ? `-c search_path=${databaseSchema}` : '', settings].filter(Boolean).join(' ');
  // `pg` is loaded on first use: a SQLite process never loads it (start-up, bench/README.md eighth pass).
  const { default: pgLib } = await import('pg');
  const client = new pgLib.Client({ connectionString: databaseUrl, application_name: `stratus listener ${databaseSchema ?? ''}`.trim(), ...(options ? { options } : {}) });
  setup(client);
  try {
    await client.connect();
    const schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]!.s;
    for (const channel of channels(schema)) await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    return client;
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
}

/** Options of {@link SignalBus.start}. */
export interface SignalBusOptions {
  /** `postgres://…`; without it the bus hears only in-process signals. */
  databaseUrl?: string;
  /** PostgreSQL schema of the store (its channel is `stratus_<schema>`). */
  databaseSchema?: string;
  /** Called with errors of the listening connection (logged by the caller). */
  onError?: (e: unknown) => void;
  /** The signals come through another connection ({@link SignalBus.relay}): no connection of its own. */
  relayed?: boolean;
}

/** What a connection that also listens on the bus's channel tells the bus ({@link SignalBus.relay}). */
export interface SignalRelay {
  /** A notification of the bus's channel arrived (its payload). */
  deliver(payload: string | undefined): void;
  /** The connection (re)started listening: what was signalled while it was away is looked at again. */
  listening(): void;
}

/** One app's receiver of {@link signal}s. */
export class SignalBus {
  private readonly events = new EventEmitter();
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly onLocal = new Map<SignalTopic, () => void>(topics.map((t) => [t, () => this.events.emit(t)]));

  constructor() {
    this.events.setMaxListeners(0);
  }

  /** Calls `fn` on every signal of `topic`; returns a function that stops it. */
  on(topic: SignalTopic, fn: () => void): () => void {
    this.events.on(topic, fn);
    return () => this.events.off(topic, fn);
  }

  /** Starts listening (PostgreSQL: connects the dedicated client, unless `relayed`). */
  async start(opts: SignalBusOptions): Promise<void> {
    if (!opts.databaseUrl) {
      for (const t of topics) local.on(t, this.onLocal.get(t)!);
      return;
    }
    if (opts.relayed) return;
    await this.connect(opts);
  }

  /**
   * The receiving end for a connection that `LISTEN`s on {@link signalChannel} for this bus
   * (`cache-presence.ts`); start the bus with `relayed` then.
   */
  relay(): SignalRelay {
    return {
      deliver: (payload) => {
        if (!this.closed && payload && (topics as string[]).includes(payload)) this.events.emit(payload);
      },
      listening: () => {
        if (!this.closed) for (const t of topics) this.events.emit(t);
      },
    };
  }

  private async connect(opts: SignalBusOptions): Promise<void> {
    const client = await listeningClient(opts.databaseUrl!, opts.databaseSchema, (schema) => [signalChannel(schema)], (c) => {
      c.on('error', (e) => this.lost(opts, c, e));
      c.on('end', () => this.lost(opts, c));
      c.on('notification', (n) => {
        if (c === this.client && n.payload && (topics as string[]).includes(n.payload)) this.events.emit(n.payload);
      });
    });
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    // Whatever was signalled while not listening: look again.
    for (const t of topics) this.events.emit(t);
  }

  /** The listening connection `client` failed (undefined: a connection attempt failed): retries in a second. */
  private lost(opts: SignalBusOptions, client: pg.Client | undefined, e?: unknown): void {
    if (client && client !== this.client) return;
    this.client = undefined;
    client?.end().catch(() => undefined);
    if (e) opts.onError?.(e);
    if (!this.closed && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.connect(opts).catch((err) => this.lost(opts, undefined, err));
      }, 1000);
    }
  }

  /** Stops listening; idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    for (const t of topics) local.off(t, this.onLocal.get(t)!);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
    this.events.removeAllListeners();
  }
}
