/**
 * Eventstream creation (spec analytics-platform-mail-wopi §2.2, §3, §4.2, §5, §7, §8;
 * reference §2–§5): 201 at once, 202 → poll → Succeeded → result → item (also across a
 * restart), a Failed operation, validation codes, access, the platform error envelope and
 * the per-caller 429. Plain `fetch` over HTTPS; the clock moves through the control plane.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { demoAdmin, demoManagedIdentity, demoServicePrincipal } from '../src/seed/demo.ts';
import { platformDemoFolder, platformDemoWorkspace, platformLabels, platformSandboxFolder, platformSandboxWorkspace } from '../src/seed/demo.ts';
import { advance, assertPlatformError, b64, call, definition, topology, uniqueName } from './helpers/platform.ts';

const ws = platformDemoWorkspace.id;
const esPath = `/v1/workspaces/${ws}/eventstreams`;
const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const scope = 'api://stratus/platform/Eventstream.ReadWrite.All';

describe('eventstream creation completing at once (no provisioning delay)', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  let sp: string;
  before(async () => {
    s = await startTestServer();
    admin = await userToken(s.url, identities.admin, [scope]);
    user = await userToken(s.url, identities.user, ['api://stratus/platform/Item.ReadWrite.All']);
    sp = await appToken(s.url, 'platform');
  });
  after(async () => {
    await s?.close();
  });

  test('a Contributor service principal without a definition gets 201 with the Eventstream, and GET reads it back', async () => {
    const name = uniqueName();
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, type: 'Eventstream', folderId: null });
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.id, uuidRe);
    assert.equal(r.body.type, 'Eventstream');
    assert.equal(r.body.displayName, name);
    assert.equal(r.body.workspaceId, ws);
    assert.equal('description' in r.body, false);
    assert.equal('folderId' in r.body, false);
    assert.deepEqual(r.body.defaultIdentity, { id: demoServicePrincipal.objectId, displayName: demoServicePrincipal.displayName, type: 'ServicePrincipal', servicePrincipalDetails: { idpAppId: demoServicePrincipal.appId } });
    assert.ok(r.headers.get('requestid'));
    const g = await call(s.url, 'GET', `${esPath}/${r.body.id}`, sp);
    assert.equal(g.status, 200);
    assert.deepEqual(g.body, r.body);
    assert.equal(g.headers.get('etag'), '""');
  });

  test('the administrator creates in the folder Streams with a description and the Confidential label', async () => {
    const name = uniqueName();
    const r = await call(s.url, 'POST', esPath, admin, {
      displayName: name,
      description: 'd'.repeat(256),
      folderId: platformDemoFolder.id,
      sensitivityLabelSettings: { labelId: platformLabels.confidential.id },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.description, 'd'.repeat(256));
    assert.equal(r.body.folderId, platformDemoFolder.id);
    assert.deepEqual(r.body.sensitivityLabel, { id: platformLabels.confidential.id });
    assert.deepEqual(r.body.defaultIdentity, { id: demoAdmin.id, displayName: demoAdmin.displayName, type: 'User', userDetails: { userPrincipalName: demoAdmin.userPrincipalName } });
  });

  test('a managed identity with an app token creates too', async () => {
    const mi = await appToken(s.url, 'platform', identities.mi);
    const r = await call(s.url, 'POST', esPath, mi, { displayName: uniqueName('mi') });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.defaultIdentity.id, demoManagedIdentity.objectId);
    assert.equal(r.body.defaultIdentity.servicePrincipalDetails.idpAppId, demoManagedIdentity.appId);
  });

  test('a definition makes it long-running even without a delay: 202 with Location, x-vendor-operation-id and Retry-After, then Succeeded at once', async () => {
    const name = uniqueName();
    const logicalId = randomUUID();
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition(logicalId) });
    assert.equal(r.status, 202, r.text);
    const opId = r.headers.get('x-vendor-operation-id')!;
    assert.match(opId, uuidRe);
    assert.equal(r.headers.get('location'), `${s.url}/v1/operations/${opId}`);
    assert.match(r.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(r.text, 'null');
    const op = await call(s.url, 'GET', r.headers.get('location')!, sp);
    assert.equal(op.status, 200);
    assert.equal(op.body.status, 'Succeeded');
    assert.equal(op.headers.get('location'), `${s.url}/v1/operations/${opId}/result`);
    const res = await call(s.url, 'GET', op.headers.get('location')!, sp);
    assert.equal(res.status, 200);
    assert.equal(res.body.displayName, name);
    // The definition reads back: the given parts, and .platform with the item's name and the given logical id.
    const def = await call(s.url, 'POST', `${esPath}/${res.body.id}/getDefinition`, sp);
    assert.equal(def.status, 200, def.text);
    const parts = Object.fromEntries(def.body.definition.parts.map((p: any) => [p.path, JSON.parse(Buffer.from(p.payload, 'base64').toString('utf8'))]));
    assert.deepEqual(parts['eventstream.json'], topology);
    assert.deepEqual(parts['eventstreamProperties.json'], { retentionTimeInDays: 7, eventThroughputLevel: 'Medium' });
    assert.equal(parts['.platform'].metadata.displayName, name);
    assert.equal(parts['.platform'].config.logicalId, logicalId);
  });

  test('the documentation example topology is accepted; the contract example placeholder payloads are CorruptedPayload', async () => {
    // The "Eventstream definition" article's eventstream.json (reference §5), with a CRLF-formatted properties part.
    const article = {"sources": [{"name": "myEventHub", "type": "CloudEventHub", "properties": {"dataConnectionId": "cc8271ee-8f72-473d-969c-6828f5fd0d45", "consumerGroupName": "$Default", "inputSerialization": {"type": "Json", "properties": {"encoding": "UTF8"}}}}], "destinations": [{"name": "myLakehouse", "type": "Lakehouse", "properties": {"workspaceId": "fdf52f3a-b687-41b8-8ff8-aeeca4d1edd8", "itemId": "737d6a97-e88c-45e1-9c39-adf1c9c4e817", "schema": "", "deltaTable": "newTable", "minimumRows": 100000, "maximumDurationInSeconds": 120, "inputSerialization": {"type": "Json", "properties": {"encoding": "UTF8"}}}, "inputNodes": [{"name": "derivedStream"}]}], "streams": [{"name": "myEventstream-stream", "type": "DefaultStream", "properties": {}, "inputNodes": [{"name": "myEventHub"}]}, {"name": "derivedStream", "type": "DerivedStream", "properties": {"inputSerialization": {"type": "Json", "properties": {"encoding": "UTF8"}}}, "inputNodes": [{"name": "GroupBy"}]}], "operators": [{"name": "GroupBy", "type": "GroupBy", "inputNodes": [{"name": "myEventstream-stream"}], "properties": {"aggregations": [{"aggregateFunction": "Average", "column": {"expressionType": "ColumnReference", "node": null, "columnName": "payload", "columnPathSegments": [{"field": "ts_ms"}]}, "alias": "AVG_ts_ms"}], "groupBy": [], "window": {"type": "Tumbling", "properties": {"duration": {"value": 5, "unit": "Minute"}, "offset": {"value": 1, "unit": "Minute"}}}}}], "compatibilityLevel": "1.0"};
    const ok = await call(s.url, 'POST', esPath, sp, {
      displayName: uniqueName('article'),
      definition: { format: 'eventstream', parts: [
        { path: 'eventstream.json', payload: b64(JSON.stringify(article, null, 2)), payloadType: 'InlineBase64' },
        { path: 'eventstreamProperties.json', payload: b64('{\r\n  "retentionTimeInDays": 1,\r\n  "eventThroughputLevel": "Low"\r\n}'), payloadType: 'InlineBase64' },
      ] },
    });
    assert.equal(ok.status, 202, ok.text);
    // CreateEventstreamWithDefinition.json: payloads with '..' are not base64.
    const contract = await call(s.url, 'POST', esPath, sp, {
      displayName: uniqueName('contract'),
      description: 'Eventstream_1 description.',
      definition: { format: 'eventstream', parts: [
        { path: 'eventstream.json', payload: 'SSdkIGxpa2UgdG8gdGVsbCBh..IGpva2UgZm9yIHlvdS4K', payloadType: 'InlineBase64' },
        { path: 'eventstreamProperties.json', payload: 'ewogICJyZXRlbnRpb25UaW1l..V2ZWwiOiAiTG93Igp9', payloadType: 'InlineBase64' },
        { path: '.platform', payload: 'ZG90UGxhdGZvcm1CYXNlNjRTdHJpbmc=', payloadType: 'InlineBase64' },
      ] },
    });
    assertPlatformError(contract, 400, 'CorruptedPayload');
    assert.match(contract.body.moreDetails[0].message, /eventstream\.json/);
  });

  test('a Viewer is refused with 403 InsufficientWorkspaceRole in the platform ErrorResponse, and nothing is created', async () => {
    const name = uniqueName();
    const r = await call(s.url, 'POST', esPath, user, { displayName: name });
    assertPlatformError(r, 403, 'InsufficientWorkspaceRole');
    assert.equal(r.body.isRetriable, false);
    assert.deepEqual(r.body.relatedResource, { resourceId: ws, resourceType: 'Workspace' });
    const list = await call(s.url, 'GET', esPath, admin);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
    // The same user is Contributor in the sandbox workspace and creates there.
    const ok = await call(s.url, 'POST', `/v1/workspaces/${platformSandboxWorkspace.id}/eventstreams`, user, { displayName: name });
    assert.equal(ok.status, 201, ok.text);
  });

  test('an unknown workspace is 404 WorkspaceNotFound; another tenant does not see the demo workspace', async () => {
    const r = await call(s.url, 'POST', `/v1/workspaces/${randomUUID()}/eventstreams`, sp, { displayName: uniqueName() });
    assertPlatformError(r, 404, 'WorkspaceNotFound');
    const eve = await userToken(s.url, identities.eve, [scope]);
    const e = await call(s.url, 'POST', esPath, eve, { displayName: uniqueName() });
    assertPlatformError(e, 404, 'WorkspaceNotFound');
    const g = await call(s.url, 'GET', esPath, eve);
    assertPlatformError(g, 404, 'WorkspaceNotFound');
  });

  test('a missing token, a token for another audience: 401 with a Bearer challenge', async () => {
    const none = await call(s.url, 'POST', esPath, undefined, { displayName: uniqueName() });
    assertPlatformError(none, 401, 'Unauthorized');
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer authorization_uri="/);
    const other = await appToken(s.url, 'analytics');
    const r = await call(s.url, 'POST', esPath, other, { displayName: uniqueName() });
    assertPlatformError(r, 401, 'Unauthorized');
  });

  test('bad payloads are 400 CorruptedPayload naming the part; nothing is created', async () => {
    const name = uniqueName();
    const withPart = (path: string, payload: string) => ({ displayName: name, definition: { parts: [{ path: 'eventstream.json', payload: b64(topology), payloadType: 'InlineBase64' }, { path, payload, payloadType: 'InlineBase64' }].filter((p, i, a) => a.findIndex((q) => q.path === p.path) === i || i === 1).slice(path === 'eventstream.json' ? 1 : 0) } });
    const cases: [unknown, RegExp][] = [
      [withPart('eventstream.json', 'not*base64!'), /not valid base64/],
      [withPart('eventstream.json', b64('this is not json')), /not valid JSON/],
      [withPart('eventstream.json', b64({ sources: {} })), /'sources' must be an array/],
      [withPart('eventstream.json', b64({ streams: [{ name: 's', type: 'DefaultStream', inputNodes: [{ name: 'ghost' }] }] })), /ghost/],
      [withPart('eventstreamProperties.json', b64({ retentionTimeInDays: 0 })), /retentionTimeInDays/],
      [withPart('eventstreamProperties.json', b64({ eventThroughputLevel: 'Huge' })), /eventThroughputLevel/],
      [withPart('.platform', b64({ metadata: { type: 'Lakehouse' } })), /metadata.type/],
      [withPart('notebook.ipynb', b64({})), /not a part of an eventstream definition/],
      [{ displayName: name, definition: { parts: [{ path: 'eventstreamProperties.json', payload: b64({}), payloadType: 'InlineBase64' }] } }, /no 'eventstream.json'/],
    ];
    for (const [body, msg] of cases) {
      const r = await call(s.url, 'POST', esPath, sp, body);
      assertPlatformError(r, 400, 'CorruptedPayload');
      assert.match(r.body.message, msg);
      assert.ok(Array.isArray(r.body.moreDetails) && r.body.moreDetails[0].errorCode === 'CorruptedPayload');
    }
    const wrongType = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: { parts: [{ path: 'eventstream.json', payload: b64(topology), payloadType: 'Inline' }] } });
    assertPlatformError(wrongType, 400, 'InvalidInput');
    const notJson = await call(s.url, 'POST', esPath, sp, '{"displayName": ');
    assertPlatformError(notJson, 400, 'InvalidInput');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
  });

  test('naming rules and the description limit: 400 InvalidInput; 123 characters pass', async () => {
    for (const displayName of [undefined, '', '   ', 'a'.repeat(124), 'a/b', 'tab\there', ' lead', 'q?', 42]) {
      const r = await call(s.url, 'POST', esPath, sp, { displayName });
      assertPlatformError(r, 400, 'InvalidInput');
    }
    const long = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), description: 'x'.repeat(257) });
    assertPlatformError(long, 400, 'InvalidInput');
    assert.equal(long.body.message, 'The request has an invalid input');
    assert.equal(long.body.moreDetails[0].errorCode, 'InvalidParameter');
    assert.match(long.body.moreDetails[0].message, /description.*256/);
    const ok = await call(s.url, 'POST', esPath, sp, { displayName: `${uniqueName()}${'a'.repeat(112)}` });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.displayName.length, 123);
    const badType = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), type: 'Lakehouse' });
    assertPlatformError(badType, 400, 'InvalidItemType');
  });

  test('a duplicate name (case-insensitive) in the workspace is 409 ItemDisplayNameAlreadyInUse; another workspace may reuse it', async () => {
    const name = uniqueName('Dup');
    assert.equal((await call(s.url, 'POST', esPath, sp, { displayName: name })).status, 201);
    const again = await call(s.url, 'POST', esPath, admin, { displayName: name.toLowerCase() });
    assertPlatformError(again, 409, 'ItemDisplayNameAlreadyInUse');
    const lro = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition() });
    assertPlatformError(lro, 409, 'ItemDisplayNameAlreadyInUse');
    const other = await call(s.url, 'POST', `/v1/workspaces/${platformSandboxWorkspace.id}/eventstreams`, admin, { displayName: name });
    assert.equal(other.status, 201);
  });

  test('a folder that is not a folder of that workspace is 404 FolderNotFound', async () => {
    for (const folderId of [randomUUID(), platformSandboxFolder.id]) {
      const r = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), folderId });
      assertPlatformError(r, 404, 'FolderNotFound');
      assert.deepEqual(r.body.relatedResource, { resourceId: folderId, resourceType: 'Folder' });
    }
    const bad = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), folderId: 'not-a-uuid' });
    assertPlatformError(bad, 400, 'InvalidInput');
  });

  test('label settings: unknown label fails under ApplyOrFail and is skipped under Ignore; an unpublished label fails or is skipped', async () => {
    const unknown = randomUUID();
    const f = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: unknown } });
    assertPlatformError(f, 400, 'SensitivityLabelNotFound');
    const f2 = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: unknown, sensitivityLabelApplyStrategy: 'ApplyOrFail' } });
    assertPlatformError(f2, 400, 'SensitivityLabelNotFound');
    const ig = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: unknown, sensitivityLabelApplyStrategy: 'Ignore' } });
    assert.equal(ig.status, 201);
    assert.equal('sensitivityLabel' in ig.body, false);
    // Highly Confidential is published only to the administrator.
    const hc = platformLabels.highlyConfidential.id;
    const spFail = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: hc } });
    assertPlatformError(spFail, 400, 'SensitivityLabelCannotBeApplied');
    const spIgnore = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: hc, sensitivityLabelApplyStrategy: 'Ignore' } });
    assert.equal(spIgnore.status, 201);
    assert.equal('sensitivityLabel' in spIgnore.body, false);
    const adminOk = await call(s.url, 'POST', esPath, admin, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: hc, sensitivityLabelApplyStrategy: 'ApplyOrFail' } });
    assert.equal(adminOk.status, 201);
    assert.deepEqual(adminOk.body.sensitivityLabel, { id: hc });
    const general = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: platformLabels.general.id } });
    assert.deepEqual(general.body.sensitivityLabel, { id: platformLabels.general.id });
    const badStrategy = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName(), sensitivityLabelSettings: { labelId: hc, sensitivityLabelApplyStrategy: 'Maybe' } });
    assertPlatformError(badStrategy, 400, 'InvalidInput');
  });
});

describe('eventstream creation as a long-running operation (provisioning delay 30 s)', () => {
  let s: TestServer;
  let sp: string;
  let admin: string;
  before(async () => {
    s = await startTestServer({ settings: { platformProvisioningDelaySeconds: 30 } });
    sp = await appToken(s.url, 'platform');
    admin = await userToken(s.url, identities.admin, [scope]);
  });
  after(async () => {
    await s?.close();
  });

  test('202 → Running → (clock +31 s) → Succeeded → result → the item, with the name reserved meanwhile', async () => {
    const name = uniqueName('lro');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, description: 'made by a contributor', definition: definition() });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.headers.get('retry-after'), '30');
    assert.match(r.headers.get('requestid') ?? '', uuidRe);
    assert.equal(r.headers.get('etag'), '""');
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const opId = r.headers.get('x-vendor-operation-id')!;
    const location = r.headers.get('location')!;
    assert.equal(location, `${s.url}/v1/operations/${opId}`);

    const running = await call(s.url, 'GET', location, sp);
    assert.equal(running.status, 200);
    assert.equal(running.body.status, 'Running');
    assert.equal(running.body.error, null);
    assert.equal(running.body.percentComplete, null);
    assert.ok(Date.parse(running.body.createdTimeUtc) > 0 && Date.parse(running.body.lastUpdatedTimeUtc) > 0);
    assert.equal(running.headers.get('location'), location);
    assert.equal(running.headers.get('x-vendor-operation-id'), opId);
    assert.ok(Number(running.headers.get('retry-after')) >= 1);
    const early = await call(s.url, 'GET', `${location}/result`, sp);
    assertPlatformError(early, 400, 'OperationHasNoResult');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
    const dup = await call(s.url, 'POST', esPath, admin, { displayName: name });
    assertPlatformError(dup, 409, 'ItemDisplayNameAlreadyInUse');

    await advance(s, 31);
    const done = await call(s.url, 'GET', location, sp);
    assert.equal(done.body.status, 'Succeeded');
    assert.equal(done.body.percentComplete, 100);
    assert.equal(done.body.error, null);
    assert.ok(Date.parse(done.body.lastUpdatedTimeUtc) - Date.parse(done.body.createdTimeUtc) === 30_000);
    assert.equal(done.headers.get('location'), `${location}/result`);
    assert.equal(done.headers.get('retry-after'), null);
    const result = await call(s.url, 'GET', done.headers.get('location')!, sp);
    assert.equal(result.status, 200);
    assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(result.body.displayName, name);
    assert.equal(result.body.description, 'made by a contributor');
    assert.equal(result.body.workspaceId, ws);
    const item = await call(s.url, 'GET', `${esPath}/${result.body.id}`, sp);
    assert.equal(item.status, 200);
    assert.deepEqual(item.body, result.body);
    // Reading again is stable.
    const again = await call(s.url, 'GET', location, sp);
    assert.deepEqual(again.body, done.body);
  });

  test('an item whose operation nobody polled appears in reads once its time has come', async () => {
    const name = uniqueName('unpolled');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition() });
    assert.equal(r.status, 202);
    assert.equal((await call(s.url, 'GET', esPath, admin)).body.value.some((x: any) => x.displayName === name), false);
    await advance(s, 31);
    const list = await call(s.url, 'GET', esPath, admin);
    const item = list.body.value.find((x: any) => x.displayName === name);
    assert.ok(item);
    assert.equal((await call(s.url, 'GET', `${esPath}/${item.id}`, admin)).status, 200);
    const op = await call(s.url, 'GET', r.headers.get('location')!, sp);
    assert.equal(op.body.status, 'Succeeded');
  });

  test('without a definition, a non-zero delay also answers 202', async () => {
    const r = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName() });
    assert.equal(r.status, 202);
    assert.ok(r.headers.get('x-vendor-operation-id'));
  });

  test('a label the caller cannot apply under ApplyOrFail ends Failed with an error; the name stays free', async () => {
    const name = uniqueName('fail');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition(), sensitivityLabelSettings: { labelId: platformLabels.highlyConfidential.id, sensitivityLabelApplyStrategy: 'ApplyOrFail' } });
    assert.equal(r.status, 202, r.text);
    const location = r.headers.get('location')!;
    assert.equal((await call(s.url, 'GET', location, sp)).body.status, 'Running');
    await advance(s, 31);
    const op = await call(s.url, 'GET', location, sp);
    assert.equal(op.status, 200);
    assert.equal(op.body.status, 'Failed');
    assert.equal(op.body.error.errorCode, 'SensitivityLabelCannotBeApplied');
    assert.equal(op.body.error.isRetriable, false);
    assert.deepEqual(op.body.error.relatedResource, { resourceId: platformLabels.highlyConfidential.id, resourceType: 'SensitivityLabel' });
    assert.equal(op.headers.get('location'), null);
    const res = await call(s.url, 'GET', `${location}/result`, sp);
    assertPlatformError(res, 400, 'OperationHasNoResult');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.some((x: any) => x.displayName === name), false);
    const reuse = await call(s.url, 'POST', esPath, sp, { displayName: name });
    assert.equal(reuse.status, 202);
  });

  test('only the caller reads its operation: another principal gets 404 OperationNotFound', async () => {
    const r = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName() });
    const location = r.headers.get('location')!;
    const byAdmin = await call(s.url, 'GET', location, admin);
    assertPlatformError(byAdmin, 404, 'OperationNotFound');
    const mi = await appToken(s.url, 'platform', identities.mi);
    assertPlatformError(await call(s.url, 'GET', `${location}/result`, mi), 404, 'OperationNotFound');
    const eve = await userToken(s.url, identities.eve, [scope]);
    assertPlatformError(await call(s.url, 'GET', location, eve), 404, 'OperationNotFound');
    assertPlatformError(await call(s.url, 'GET', `/v1/operations/${randomUUID()}`, sp), 404, 'OperationNotFound');
    assert.equal((await call(s.url, 'GET', location, sp)).status, 200);
  });

  test('an operation interrupted by a restart completes after it, and the item is there once', async () => {
    const name = uniqueName('restart');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition() });
    assert.equal(r.status, 202);
    const location = r.headers.get('location')!;
    assert.equal((await call(s.url, 'GET', location, sp)).body.status, 'Running');
    await s.restart();
    assert.equal((await call(s.url, 'GET', location, sp)).body.status, 'Running');
    await advance(s, 31);
    await s.restart();
    const done = await call(s.url, 'GET', location, sp);
    assert.equal(done.body.status, 'Succeeded');
    const result = await call(s.url, 'GET', `${location}/result`, sp);
    assert.equal(result.body.displayName, name);
    await s.restart();
    const item = await call(s.url, 'GET', `${esPath}/${result.body.id}`, sp);
    assert.equal(item.status, 200);
    assert.equal((await call(s.url, 'GET', location, sp)).body.status, 'Succeeded');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.filter((x: any) => x.displayName === name).length, 1);
  });
});

describe('concurrency and the control-plane reset', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ settings: { platformProvisioningDelaySeconds: 10 } });
  });
  after(async () => {
    await s?.close();
  });

  test('concurrent creates of one name: exactly one is accepted, the rest are 409', async () => {
    const sp = await appToken(s.url, 'platform');
    const admin = await userToken(s.url, identities.admin, [scope]);
    const name = uniqueName('race');
    const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => call(s.url, 'POST', esPath, i % 2 ? sp : admin, { displayName: name })));
    assert.equal(rs.filter((r) => r.status === 202).length, 1, rs.map((r) => r.status).join(','));
    for (const r of rs.filter((x) => x.status !== 202)) assertPlatformError(r, 409, 'ItemDisplayNameAlreadyInUse');
  });

  test('concurrent polls of a due operation all see Succeeded and the item exists once', async () => {
    const sp = await appToken(s.url, 'platform');
    const name = uniqueName('polls');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: name, definition: definition() });
    await advance(s, 11);
    const polls = await Promise.all(Array.from({ length: 8 }, () => call(s.url, 'GET', r.headers.get('location')!, sp)));
    for (const p of polls) assert.equal(p.body.status, 'Succeeded');
    const list = await call(s.url, 'GET', esPath, sp);
    assert.equal(list.body.value.filter((x: any) => x.displayName === name).length, 1);
  });

  test('POST /_stratus/reset removes created items and operations and restores the demo rows', async () => {
    const sp = await appToken(s.url, 'platform');
    const r = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('gone') });
    assert.equal(r.status, 202);
    const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
    assert.equal(reset.status, 200);
    const sp2 = await appToken(s.url, 'platform');
    assert.deepEqual((await call(s.url, 'GET', esPath, sp2)).body, { value: [] });
    assertPlatformError(await call(s.url, 'GET', r.headers.get('location')!, sp2), 404, 'OperationNotFound');
    const again = await call(s.url, 'POST', esPath, sp2, { displayName: uniqueName(), folderId: platformDemoFolder.id, sensitivityLabelSettings: { labelId: platformLabels.confidential.id } });
    assert.equal(again.status, 202, again.text);
  });
});

describe('the per-caller request budget', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ settings: { platformRequestsPerWindow: 3, platformWindowSeconds: 60 } });
  });
  after(async () => {
    await s?.close();
  });

  test('the fourth request in the window is 429 RequestBlocked with Retry-After; another caller is unaffected; the window ends', async () => {
    const sp = await appToken(s.url, 'platform');
    for (let i = 0; i < 3; i++) assert.equal((await call(s.url, 'GET', esPath, sp)).status, 200);
    const blocked = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName() });
    assertPlatformError(blocked, 429, 'RequestBlocked');
    assert.equal(blocked.body.isRetriable, true);
    const retry = Number(blocked.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60);
    assert.match(blocked.body.message, /^Request is blocked by the upstream service until: \d{1,2}\/\d{1,2}\/\d{4} \d{1,2}:\d{2}:\d{2} (AM|PM) \(UTC\)$/);
    const admin = await userToken(s.url, identities.admin, [scope]);
    assert.equal((await call(s.url, 'GET', esPath, admin)).status, 200);
    await advance(s, retry + 1);
    assert.equal((await call(s.url, 'GET', esPath, sp)).status, 200);
  });
});
