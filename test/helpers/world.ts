/**
 * The world export as the world tests compare it: `GET /_stratus/world` as YAML text (to start
 * another server from) and as JSON without its volatile field (`clock`).
 */
import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';

/** The export of `server`: its YAML text and its JSON document without `clock`. */
export async function exportedWorld(server: TestServer): Promise<{ text: string; doc: any }> {
  const r = await server.control('/_stratus/world?format=yaml');
  assert.equal(r.status, 200);
  const text = await r.text();
  const json = (await (await server.control('/_stratus/world')).json()) as any;
  delete json.clock;
  return { text, doc: json };
}
