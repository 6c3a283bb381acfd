/**
 * Shared helpers of the platform tests: plain `fetch` calls and base64 definition parts.
 */
import { randomUUID } from 'node:crypto';

/** The response of one call: status, parsed JSON body (undefined when empty) and headers. */
export interface Call {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** One request with an optional bearer token and JSON body. */
export async function call(base: string, method: string, path: string, token?: string, body?: unknown): Promise<Call> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return toCall(await fetch(path.startsWith('http') ? path : `${base}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) }));
}

/** A response as a {@link Call}: status, body parsed when it is JSON, the text and the headers. */
export async function toCall(res: Response): Promise<Call> {
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** Moves the server's clock forward (through the control plane, with the control key). */
export async function advance(s: { control(path: string, init?: RequestInit): Promise<Response> }, seconds: number): Promise<void> {
  const r = await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  if (r.status !== 200) throw new Error(`clock: ${r.status}`);
}

/** Base64 of a JSON value. */
export const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8').toString('base64');

/** A small valid topology (`eventstream.json`). */
export const topology = {
  sources: [{ name: 'sample', type: 'SampleData', properties: { type: 'Bicycles' } }],
  destinations: [{ name: 'endpoint', type: 'CustomEndpoint', properties: {}, inputNodes: [{ name: 'main-stream' }] }],
  streams: [{ name: 'main-stream', type: 'DefaultStream', properties: {}, inputNodes: [{ name: 'sample' }] }],
  operators: [],
  compatibilityLevel: '1.0',
};

/** A valid definition with the three parts. */
export function definition(logicalId = randomUUID()) {
  return {
    format: 'eventstream',
    parts: [
      { path: 'eventstream.json', payload: b64(topology), payloadType: 'InlineBase64' },
      { path: 'eventstreamProperties.json', payload: b64({ retentionTimeInDays: 7, eventThroughputLevel: 'Medium' }), payloadType: 'InlineBase64' },
      { path: '.platform', payload: b64({ metadata: { type: 'Eventstream', displayName: 'ignored' }, config: { version: '2.0', logicalId } }), payloadType: 'InlineBase64' },
    ],
  };
}

/** A unique display name. */
export const uniqueName = (prefix = 'es'): string => `${prefix}_${randomUUID().slice(0, 8)}`;

/** The platform error body's keys must be these (optional ones when present). */
export function assertPlatformError(r: Call, status: number, code: string): void {
  if (r.status !== status || r.body?.errorCode !== code) throw new Error(`expected ${status} ${code}, got ${r.status} ${r.text}`);
  const rid = r.headers.get('requestid');
  if (!rid || r.body.requestId !== rid) throw new Error(`RequestId header ${rid} must equal body requestId ${r.body.requestId}`);
  if (typeof r.body.message !== 'string' || !r.body.message) throw new Error('message missing');
  if (r.headers.get('x-vendor-public-api-error-code') !== code) throw new Error('x-vendor-public-api-error-code missing');
  for (const k of Object.keys(r.body)) if (!['requestId', 'errorCode', 'message', 'isRetriable', 'moreDetails', 'relatedResource'].includes(k)) throw new Error(`unexpected key ${k}`);
}
