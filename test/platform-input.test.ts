/**
 * Malformed input on every platform route (wrong JSON types, nulls, repeated query
 * parameters, wrong media types, NUL characters and lone surrogates, bad ids): a 400/415 in
 * the platform `ErrorResponse` — the shape the service is publicly seen to return for a
 * malformed request (`InvalidInput`, "The request has an invalid input", one `moreDetails`
 * entry `InvalidParameter`, `isRetriable: false`) — never a 500, and nothing stored. Also the
 * headers the recordings show on every answer (reference §2.2, §3.3, §4.1) and the delete
 * answer's media type (reference §2.5).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken } from './helpers/auth.ts';
import { platformDemoWorkspace } from '../src/seed/demo.ts';
import { assertPlatformError, b64, call, definition, toCall, uniqueName, type Call } from './helpers/platform.ts';

const ws = platformDemoWorkspace.id;
const esPath = `/v1/workspaces/${ws}/eventstreams`;

/** A request with a raw body and content type. */
async function raw(base: string, method: string, path: string, token: string, body: string | undefined, contentType?: string): Promise<Call> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (contentType) headers['content-type'] = contentType;
  return toCall(await fetch(`${base}${path}`, { method, headers, body }));
}

/** A 400 `InvalidInput` whose single `InvalidParameter` detail matches `detail`. */
function assertInvalidInput(r: Call, detail: RegExp): void {
  assertPlatformError(r, 400, 'InvalidInput');
  assert.equal(r.body.message, 'The request has an invalid input');
  assert.equal(r.body.isRetriable, false);
  assert.equal(r.body.moreDetails.length, 1, r.text);
  assert.equal(r.body.moreDetails[0].errorCode, 'InvalidParameter');
  assert.match(r.body.moreDetails[0].message, detail);
  assert.deepEqual(Object.keys(r.body), ['requestId', 'errorCode', 'moreDetails', 'message', 'isRetriable']);
}

describe('malformed input on the platform routes', () => {
  let s: TestServer;
  let sp: string;
  let id: string;
  before(async () => {
    s = await startTestServer();
    sp = await appToken(s.url, 'platform');
    const c = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('target') });
    assert.equal(c.status, 201, c.text);
    id = c.body.id;
  });
  after(async () => {
    await s?.close();
  });

  test('create: wrong JSON types and shapes are 400 InvalidInput naming the property (no coercion: 42 is not a name)', async () => {
    const cases: [unknown, RegExp][] = [
      [[], /request body must be a JSON object/],
      ['"text"', /request body must be a JSON object/],
      [{}, /'displayName' is required/],
      [{ displayName: 42 }, /'displayName' must be a string/],
      [{ displayName: ['a'] }, /'displayName' must be a string/],
      [{ displayName: 'n', description: 5 }, /'description' must be a string\./],
      [{ displayName: 'n', folderId: 5 }, /'folderId' must be a uuid\./],
      [{ displayName: 'n', folderId: 'not-a-uuid' }, /'folderId' must be a uuid/],
      [{ displayName: 'n', type: 5 }, /'type' must be a string/],
      [{ displayName: 'n', definition: 'abc' }, /'definition' must be an object/],
      [{ displayName: 'n', definition: { parts: 'x' } }, /'definition\/parts' must be an array/],
      [{ displayName: 'n', definition: { parts: [] } }, /'definition\/parts' must not be empty/],
      [{ displayName: 'n', definition: { parts: [null] } }, /'definition\/parts\/0' must be an object/],
      [{ displayName: 'n', definition: { parts: [{ path: 'eventstream.json', payloadType: 'InlineBase64' }] } }, /'definition\/parts\/0\/payload' is required/],
      [{ displayName: 'n', definition: { format: 5, parts: [{ path: 'eventstream.json', payload: b64({}), payloadType: 'InlineBase64' }] } }, /'definition\/format' must be a string/],
      [{ displayName: 'n', sensitivityLabelSettings: 'x' }, /'sensitivityLabelSettings' must be an object/],
      [{ displayName: 'n', sensitivityLabelSettings: {} }, /'sensitivityLabelSettings\/labelId' is required/],
      [{ displayName: 'n', sensitivityLabelSettings: { labelId: 7 } }, /'sensitivityLabelSettings\/labelId' must be a uuid/],
    ];
    for (const [body, detail] of cases) {
      const r = await raw(s.url, 'POST', esPath, sp, typeof body === 'string' ? body : JSON.stringify(body), 'application/json');
      assertInvalidInput(r, detail);
    }
    // An absent body is a malformed request too.
    assertInvalidInput(await raw(s.url, 'POST', esPath, sp, undefined), /request body must be a JSON object/);
  });

  test('NUL characters and lone surrogates are refused in names and descriptions (both stores), not stored', async () => {
    const name = uniqueName('nul');
    for (const body of [
      `{"displayName":"${name}","description":"a\\u0000b"}`,
      `{"displayName":"${name}","description":"a\\ud800b"}`,
      `{"displayName":"a\\u0000b"}`,
      `{"displayName":"a\\udc00b"}`,
    ]) {
      const r = await raw(s.url, 'POST', esPath, sp, body, 'application/json');
      assertInvalidInput(r, /(NUL characters|lone surrogates)/);
    }
    const p = await raw(s.url, 'PATCH', `${esPath}/${id}`, sp, '{"description":"x\\u0000"}', 'application/json');
    assertInvalidInput(p, /NUL characters/);
    const platformFile = Buffer.from('{"metadata":{"type":"Eventstream","description":"x\\u0000y"}}', 'utf8').toString('base64');
    const u = await call(s.url, 'POST', `${esPath}/${id}/updateDefinition?updateMetadata=true`, sp, {
      definition: { parts: [{ path: 'eventstream.json', payload: b64({}), payloadType: 'InlineBase64' }, { path: '.platform', payload: platformFile, payloadType: 'InlineBase64' }] },
    });
    assertInvalidInput(u, /NUL characters/);
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.status, 200);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
    const item = await call(s.url, 'GET', `${esPath}/${id}`, sp);
    assert.equal('description' in item.body, false);
    // Well-formed unicode is fine.
    const ok = await call(s.url, 'POST', esPath, sp, { displayName: `名前 🚀 ${uniqueName()}`, description: 'Ünïcödé ✓' });
    assert.equal(ok.status, 201, ok.text);
    assert.equal((await call(s.url, 'GET', `${esPath}/${ok.body.id}`, sp)).body.description, 'Ünïcödé ✓');
  });

  test('bodies that are not JSON: 415 for another media type (a form body used to create an item), 400 for broken JSON', async () => {
    const name = uniqueName('form');
    for (const [body, type] of [[`displayName=${name}`, 'application/x-www-form-urlencoded'], [JSON.stringify({ displayName: name }), 'text/plain']] as const) {
      const r = await raw(s.url, 'POST', esPath, sp, body, type);
      assertPlatformError(r, 415, 'InvalidInput');
      assert.match(r.body.message, /application\/json/);
    }
    assertPlatformError(await raw(s.url, 'PATCH', `${esPath}/${id}`, sp, 'description=x', 'application/x-www-form-urlencoded'), 415, 'InvalidInput');
    assertPlatformError(await raw(s.url, 'POST', esPath, sp, '{"displayName":', 'application/json'), 400, 'InvalidInput');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
    // A JSON media type with parameters or a +json suffix is accepted.
    const ok = await raw(s.url, 'POST', esPath, sp, JSON.stringify({ displayName: uniqueName() }), 'application/json; charset=utf-8');
    assert.equal(ok.status, 201, ok.text);
  });

  test('path and query: a malformed workspace id is 400; repeated query parameters are 400 naming the parameter', async () => {
    assertInvalidInput(await call(s.url, 'POST', '/v1/workspaces/not-a-uuid/eventstreams', sp, { displayName: uniqueName() }), /path parameter 'workspaceId' must be a uuid/);
    assertInvalidInput(await call(s.url, 'GET', '/v1/workspaces/not-a-uuid', sp), /'workspaceId' must be a uuid/);
    assertInvalidInput(await call(s.url, 'GET', '/v1/workspaces/not-a-uuid/folders', sp), /'workspaceId' must be a uuid/);
    assertInvalidInput(await call(s.url, 'GET', `${esPath}?continuationToken=a&continuationToken=b`, sp), /query parameter 'continuationToken' must be a string/);
    assertInvalidInput(await call(s.url, 'GET', '/v1/workspaces?continuationToken=a&continuationToken=b', sp), /'continuationToken' must be a string/);
    assertInvalidInput(await call(s.url, 'GET', `/v1/workspaces/${ws}/items?type=Eventstream&type=Report`, sp), /'type' must be a string/);
    assertInvalidInput(await call(s.url, 'POST', `${esPath}/${id}/getDefinition?format=a&format=b`, sp), /'format' must be a string/);
    assertInvalidInput(await call(s.url, 'DELETE', `${esPath}/${id}?hardDelete=true&hardDelete=false`, sp), /'hardDelete' must be a string/);
    assertInvalidInput(await call(s.url, 'POST', `${esPath}/${id}/updateDefinition?updateMetadata=true&updateMetadata=false`, sp, { definition: definition() }), /'updateMetadata' must be a string/);
    // The item survived the refused delete.
    assert.equal((await call(s.url, 'GET', `${esPath}/${id}`, sp)).status, 200);
    // Malformed item and operation ids are unknown ones.
    assertPlatformError(await call(s.url, 'GET', `${esPath}/not-a-uuid`, sp), 404, 'ItemNotFound');
    assertPlatformError(await call(s.url, 'GET', `/v1/operations/${'x'.repeat(500)}`, sp), 404, 'OperationNotFound');
    assertPlatformError(await call(s.url, 'GET', '/v1/operations/%00/result', sp), 404, 'OperationNotFound');
  });

  test('update and updateDefinition bodies: wrong shapes are 400 InvalidInput; an empty update stays InvalidRequest', async () => {
    assertInvalidInput(await call(s.url, 'PATCH', `${esPath}/${id}`, sp, []), /request body must be a JSON object/);
    assertInvalidInput(await call(s.url, 'PATCH', `${esPath}/${id}`, sp, { displayName: 5 }), /'displayName' must be a string\./);
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${id}`, sp, {}), 400, 'InvalidRequest');
    assertInvalidInput(await call(s.url, 'POST', `${esPath}/${id}/updateDefinition`, sp, {}), /'definition' is required/);
    assertInvalidInput(await call(s.url, 'POST', `${esPath}/${id}/updateDefinition`, sp, { definition: 5 }), /'definition' must be an object/);
    assertInvalidInput(await call(s.url, 'POST', `${esPath}/${id}/updateDefinition`, sp, { definition: { parts: [{ path: 'eventstream.json', payload: 1, payloadType: 'InlineBase64' }] } }), /'definition\/parts\/0\/payload' must be a string/);
  });

  test('the token is checked before the input: no token and a malformed body is 401', async () => {
    const r = await fetch(`${s.url}/v1/workspaces/not-a-uuid/eventstreams`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    assert.equal(r.status, 401);
    assert.equal((await r.json()).errorCode, 'Unauthorized');
  });
});

describe('headers of every platform answer', () => {
  let s: TestServer;
  let sp: string;
  before(async () => {
    s = await startTestServer();
    sp = await appToken(s.url, 'platform');
  });
  after(async () => {
    await s?.close();
  });

  // Recorded on every answer of the service (reference §2.2, §3.3, §4.1; fabric-recorded examples).
  const common = { 'cache-control': 'no-store, must-revalidate, no-cache', pragma: 'no-cache', 'strict-transport-security': 'max-age=31536000; includeSubDomains', 'x-frame-options': 'deny', 'x-content-type-options': 'nosniff' };

  test('successes and errors carry the recorded security and cache headers and expose RequestId', async () => {
    const created = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName() });
    const answers = [
      created,
      await call(s.url, 'GET', `${esPath}/${created.body.id}`, sp),
      await call(s.url, 'GET', esPath, sp),
      await call(s.url, 'POST', esPath, sp, { displayName: 'a/b' }),
      await call(s.url, 'GET', `/v1/operations/${created.body.id}`, sp),
      await call(s.url, 'POST', esPath, undefined, { displayName: uniqueName() }),
    ];
    for (const r of answers) {
      for (const [k, v] of Object.entries(common)) assert.equal(r.headers.get(k), v, `${k} on ${r.status} ${r.text}`);
      assert.match(r.headers.get('access-control-expose-headers') ?? '', /^RequestId(,|$)/);
      assert.ok(r.headers.get('requestid'));
    }
    // Errors expose RequestId only, as recorded.
    assert.equal(answers[3]!.headers.get('access-control-expose-headers'), 'RequestId');
  });

  test('delete answers 200 with an empty application/octet-stream body, as recorded', async () => {
    const c = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName() });
    const d = await call(s.url, 'DELETE', `/v1/workspaces/${ws}/items/${c.body.id}?hardDelete=true`, sp);
    assert.equal(d.status, 200);
    assert.equal(d.text, '');
    assert.equal(d.headers.get('content-type'), 'application/octet-stream');
    assert.equal(d.headers.get('access-control-expose-headers'), 'RequestId');
    assertPlatformError(await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp), 404, 'ItemNotFound');
  });
});
