/**
 * The recorded create → poll → result → get → getDefinition → PATCH → DELETE sequence of the
 * real service (reference examples `fabric-recorded/eventstream-create-lro-get-getdefinition-patch-delete`
 * and `lro-running-succeeded-and-no-result`), replayed against Stratus and compared field by
 * field: status, the header names and the exposed-header lists, content types, body keys and
 * their order. Left out on purpose: the transport headers (Content-Encoding, Content-Length,
 * Transfer-Encoding, Date) and the home-cluster ones (`home-cluster-uri`, `request-redirected`;
 * Stratus has no home cluster, spec §4.2). Bodies carry `defaultIdentity` in addition (spec §2.2).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken } from './helpers/auth.ts';
import { platformDemoWorkspace } from '../src/seed/demo.ts';
import { advance, call, uniqueName, type Call } from './helpers/platform.ts';

const ws = platformDemoWorkspace.id;
const security = ['cache-control', 'pragma', 'requestid', 'strict-transport-security', 'x-content-type-options', 'x-frame-options'];

/** The recorded header names (lower case) minus transport and home-cluster headers. */
function headerNames(r: Call): string[] {
  const skip = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive', 'home-cluster-uri', 'request-redirected', 'x-vendor-public-api-error-code']);
  return [...r.headers.keys()].filter((k) => !skip.has(k)).sort();
}

const sorted = (xs: string[]) => [...xs].sort();

describe('the recorded eventstream sequence, replayed', () => {
  let s: TestServer;
  let sp: string;
  before(async () => {
    s = await startTestServer({ settings: { platformProvisioningDelaySeconds: 20 } });
    sp = await appToken(s.url, 'platform');
  });
  after(async () => {
    await s?.close();
  });

  test('create (202) → Running → Succeeded → result → get → getDefinition → PATCH → DELETE match the recordings', async () => {
    const name = uniqueName('wire');
    // POST with the recorded body {"displayName", "type": "Eventstream", "folderId": null}.
    const created = await call(s.url, 'POST', `/v1/workspaces/${ws}/eventstreams`, sp, { displayName: name, type: 'Eventstream', folderId: null });
    assert.equal(created.status, 202, created.text);
    assert.equal(created.text, 'null');
    assert.equal(created.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(created.headers.get('access-control-expose-headers'), 'RequestId,Location,Retry-After,ETag,x-vendor-operation-id');
    assert.equal(created.headers.get('etag'), '""');
    assert.equal(created.headers.get('retry-after'), '20');
    assert.deepEqual(headerNames(created), sorted([...security, 'access-control-expose-headers', 'content-type', 'etag', 'location', 'retry-after', 'x-vendor-operation-id']));
    const opId = created.headers.get('x-vendor-operation-id')!;
    const location = created.headers.get('location')!;

    const running = await call(s.url, 'GET', location, sp);
    assert.equal(running.status, 200);
    assert.deepEqual(Object.keys(running.body), ['status', 'createdTimeUtc', 'lastUpdatedTimeUtc', 'percentComplete', 'error']);
    assert.equal(running.body.status, 'Running');
    assert.equal(running.body.percentComplete, null);
    assert.equal(running.body.error, null);
    assert.equal(running.headers.get('location'), location);
    assert.equal(running.headers.get('x-vendor-operation-id'), opId);
    assert.equal(running.headers.get('access-control-expose-headers'), 'RequestId,Location,Retry-After,x-vendor-operation-id');
    assert.deepEqual(headerNames(running), sorted([...security, 'access-control-expose-headers', 'content-type', 'location', 'retry-after', 'x-vendor-operation-id']));

    await advance(s, 21);
    const done = await call(s.url, 'GET', location, sp);
    assert.deepEqual(Object.keys(done.body), ['status', 'createdTimeUtc', 'lastUpdatedTimeUtc', 'percentComplete', 'error']);
    assert.deepEqual([done.body.status, done.body.percentComplete, done.body.error], ['Succeeded', 100, null]);
    assert.equal(done.headers.get('location'), `${location}/result`);
    assert.equal(done.headers.get('access-control-expose-headers'), 'RequestId,Location,x-vendor-operation-id');
    assert.deepEqual(headerNames(done), sorted([...security, 'access-control-expose-headers', 'content-type', 'location', 'x-vendor-operation-id']));

    const result = await call(s.url, 'GET', done.headers.get('location')!, sp);
    assert.equal(result.status, 200);
    assert.equal(result.headers.get('content-type'), 'application/json');
    assert.equal(result.headers.get('access-control-expose-headers'), 'RequestId');
    assert.deepEqual(headerNames(result), sorted([...security, 'access-control-expose-headers', 'content-type']));
    assert.deepEqual(Object.keys(result.body), ['id', 'type', 'displayName', 'workspaceId', 'defaultIdentity']);
    assert.deepEqual([result.body.type, result.body.displayName, result.body.workspaceId], ['Eventstream', name, ws]);
    const id = result.body.id;

    const got = await call(s.url, 'GET', `/v1/workspaces/${ws}/eventstreams/${id}`, sp);
    assert.equal(got.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(got.headers.get('access-control-expose-headers'), 'RequestId,ETag');
    assert.equal(got.headers.get('etag'), '""');
    assert.deepEqual(headerNames(got), sorted([...security, 'access-control-expose-headers', 'content-type', 'etag']));
    assert.deepEqual(got.body, result.body);

    const def = await call(s.url, 'POST', `/v1/workspaces/${ws}/items/${id}/getDefinition`, sp);
    assert.equal(def.status, 200);
    assert.equal(def.headers.get('access-control-expose-headers'), 'RequestId');
    assert.deepEqual(headerNames(def), sorted([...security, 'access-control-expose-headers', 'content-type']));
    assert.deepEqual(Object.keys(def.body), ['definition']);
    assert.deepEqual(Object.keys(def.body.definition), ['parts']);
    for (const p of def.body.definition.parts) assert.deepEqual(Object.keys(p), ['path', 'payload', 'payloadType']);

    const patched = await call(s.url, 'PATCH', `/v1/workspaces/${ws}/eventstreams/${id}`, sp, { description: 'fabcli000002' });
    assert.equal(patched.status, 200);
    assert.equal(patched.headers.get('access-control-expose-headers'), 'RequestId,ETag');
    assert.equal(patched.headers.get('etag'), '""');
    assert.deepEqual(Object.keys(patched.body), ['id', 'type', 'displayName', 'description', 'workspaceId', 'defaultIdentity']);
    assert.equal(patched.body.description, 'fabcli000002');

    const deleted = await call(s.url, 'DELETE', `/v1/workspaces/${ws}/items/${id}?hardDelete=true`, sp);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.text, '');
    assert.equal(deleted.headers.get('content-type'), 'application/octet-stream');
    assert.equal(deleted.headers.get('access-control-expose-headers'), 'RequestId');
    assert.deepEqual(headerNames(deleted), sorted([...security, 'access-control-expose-headers', 'content-type']));
  });

  test('a recorded error: OperationHasNoResult is 400 with the recorded keys and headers', async () => {
    const created = await call(s.url, 'POST', `/v1/workspaces/${ws}/eventstreams`, sp, { displayName: uniqueName('nores') });
    const r = await call(s.url, 'GET', `${created.headers.get('location')}/result`, sp);
    assert.equal(r.status, 400);
    assert.deepEqual(Object.keys(r.body), ['requestId', 'errorCode', 'message', 'isRetriable']);
    assert.deepEqual([r.body.errorCode, r.body.message], ['OperationHasNoResult', 'The operation has no result']);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(r.headers.get('x-vendor-public-api-error-code'), 'OperationHasNoResult');
    assert.equal(r.headers.get('access-control-expose-headers'), 'RequestId');
    assert.deepEqual(headerNames(r), sorted([...security, 'access-control-expose-headers', 'content-type']));
  });
});
