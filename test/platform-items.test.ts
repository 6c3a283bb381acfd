/**
 * Reading back what was created (reference §2.3, §2.5, §5): list with `continuationToken` /
 * `continuationUri`, get, update (PATCH), delete, getDefinition (the observed default
 * definition of an eventstream created without one) and updateDefinition; roles per
 * operation; tenant isolation; state across a restart.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { platformDemoFolder, platformDemoWorkspace, platformSandboxWorkspace } from '../src/seed/demo.ts';
import { listPageSize } from '../src/services/platform/routes.ts';
import { advance, assertPlatformError, b64, call, definition, uniqueName } from './helpers/platform.ts';

const ws = platformDemoWorkspace.id;
const esPath = `/v1/workspaces/${ws}/eventstreams`;
const decode = (p: { payload: string }) => Buffer.from(p.payload, 'base64').toString('utf8');

describe('eventstream items', () => {
  let s: TestServer;
  let sp: string;
  let admin: string;
  let user: string;
  before(async () => {
    s = await startTestServer();
    sp = await appToken(s.url, 'platform');
    admin = await userToken(s.url, identities.admin, ['api://stratus/platform/Item.ReadWrite.All']);
    user = await userToken(s.url, identities.user, ['api://stratus/platform/Eventstream.ReadWrite.All']);
  });
  after(async () => {
    await s?.close();
  });

  test('list pages by continuationToken and continuationUri, ordered by name, and drops both keys on the last page', async () => {
    const ws2 = platformSandboxWorkspace.id;
    const path = `/v1/workspaces/${ws2}/eventstreams`;
    const names: string[] = [];
    for (let i = 0; i < listPageSize + 5; i++) {
      const name = `page_${String(i).padStart(3, '0')}`;
      names.push(name);
      const r = await call(s.url, 'POST', path, admin, { displayName: name });
      assert.equal(r.status, 201, r.text);
    }
    const first = await call(s.url, 'GET', path, user);
    assert.equal(first.status, 200);
    assert.equal(first.body.value.length, listPageSize);
    assert.deepEqual(first.body.value.map((x: any) => x.displayName), names.slice(0, listPageSize));
    assert.equal(typeof first.body.continuationToken, 'string');
    assert.equal(first.body.continuationUri, `${s.url}${path}?continuationToken=${encodeURIComponent(first.body.continuationToken)}`);
    const second = await call(s.url, 'GET', first.body.continuationUri, user);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.value.map((x: any) => x.displayName), names.slice(listPageSize));
    assert.deepEqual(Object.keys(second.body), ['value']);
    const bad = await call(s.url, 'GET', `${path}?continuationToken=garbage`, user);
    assertPlatformError(bad, 400, 'InvalidContinuationToken');
    // A token of one workspace is not valid for another.
    const cross = await call(s.url, 'GET', `${esPath}?continuationToken=${encodeURIComponent(first.body.continuationToken)}`, user);
    assertPlatformError(cross, 400, 'InvalidContinuationToken');
  });

  test('a Viewer lists and gets, but may not update, delete or read the definition', async () => {
    const c = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('view') });
    const id = c.body.id;
    const list = await call(s.url, 'GET', esPath, user);
    assert.equal(list.status, 200);
    assert.ok(list.body.value.some((x: any) => x.id === id));
    assert.equal((await call(s.url, 'GET', `${esPath}/${id}`, user)).status, 200);
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${id}`, user, { description: 'x' }), 403, 'InsufficientWorkspaceRole');
    assertPlatformError(await call(s.url, 'DELETE', `${esPath}/${id}`, user), 403, 'InsufficientWorkspaceRole');
    assertPlatformError(await call(s.url, 'POST', `${esPath}/${id}/getDefinition`, user), 403, 'InsufficientWorkspaceRole');
    assert.equal((await call(s.url, 'GET', `${esPath}/${id}`, sp)).status, 200);
  });

  test('PATCH updates the name and description; duplicates, empty updates and unknown items are refused', async () => {
    const a = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('a') });
    const b = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('b') });
    assert.equal('description' in a.body, false);
    const newName = uniqueName('renamed');
    const u = await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, { displayName: newName, description: 'now described' });
    assert.equal(u.status, 200, u.text);
    assert.equal(u.body.displayName, newName);
    assert.equal(u.body.description, 'now described');
    assert.equal(u.headers.get('etag'), '""');
    const g = await call(s.url, 'GET', `${esPath}/${a.body.id}`, sp);
    assert.deepEqual(g.body, u.body);
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, { displayName: b.body.displayName.toUpperCase() }), 409, 'ItemDisplayNameAlreadyInUse');
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, {}), 400, 'InvalidRequest');
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, { description: 'y'.repeat(257) }), 400, 'InvalidInput');
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, { displayName: 'bad/name' }), 400, 'InvalidInput');
    assertPlatformError(await call(s.url, 'PATCH', `${esPath}/${randomUUID()}`, sp, { description: 'x' }), 404, 'ItemNotFound');
    // Same name, other case, on itself is allowed.
    const self = await call(s.url, 'PATCH', `${esPath}/${a.body.id}`, sp, { displayName: newName.toUpperCase() });
    assert.equal(self.status, 200);
  });

  test('DELETE answers 200 with an empty body; the item is gone and its name is free', async () => {
    const name = uniqueName('del');
    const c = await call(s.url, 'POST', esPath, sp, { displayName: name });
    const d = await call(s.url, 'DELETE', `${esPath}/${c.body.id}?hardDelete=true`, sp);
    assert.equal(d.status, 200);
    assert.equal(d.text, '');
    assertPlatformError(await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp), 404, 'ItemNotFound');
    assertPlatformError(await call(s.url, 'DELETE', `${esPath}/${c.body.id}`, sp), 404, 'ItemNotFound');
    assert.equal((await call(s.url, 'POST', esPath, sp, { displayName: name })).status, 201);
  });

  test('getDefinition of an eventstream created without one returns the observed default parts and a current .platform', async () => {
    const name = uniqueName('def');
    const c = await call(s.url, 'POST', esPath, sp, { displayName: name, description: 'with defaults' });
    const r = await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition`, sp);
    assert.equal(r.status, 200, r.text);
    const parts = r.body.definition.parts;
    assert.deepEqual(parts.map((p: any) => p.path), ['eventstream.json', 'eventstreamProperties.json', '.platform']);
    for (const p of parts) assert.equal(p.payloadType, 'InlineBase64');
    assert.equal(decode(parts[0]), '{\r\n  "sources": [],\r\n  "destinations": [],\r\n  "streams": [],\r\n  "operators": [],\r\n  "compatibilityLevel": "1.1"\r\n}');
    assert.equal(decode(parts[1]), '{\r\n  "retentionTimeInDays": 1,\r\n  "eventThroughputLevel": "Low"\r\n}');
    assert.ok(parts[0].payload.startsWith('ew0K') && parts[2].payload.startsWith('ewog'));
    const platform = JSON.parse(decode(parts[2]));
    assert.deepEqual(platform.metadata, { type: 'Eventstream', displayName: name, description: 'with defaults' });
    assert.equal(platform.config.version, '2.0');
    assert.match(platform.config.logicalId, /^[0-9a-f-]{36}$/);
    // The .platform follows a rename.
    await call(s.url, 'PATCH', `${esPath}/${c.body.id}`, sp, { displayName: `${name}_x` });
    const again = await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition`, sp);
    const p2 = JSON.parse(decode(again.body.definition.parts[2]));
    assert.equal(p2.metadata.displayName, `${name}_x`);
    assert.equal(p2.config.logicalId, platform.config.logicalId);
    assertPlatformError(await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition?format=ipynb`, sp), 400, 'InvalidDefinitionFormat');
  });

  test('updateDefinition replaces the parts, validates them, and applies .platform metadata only with updateMetadata=true', async () => {
    const name = uniqueName('upd');
    const c = await call(s.url, 'POST', esPath, sp, { displayName: name });
    const props = { retentionTimeInDays: 30, eventThroughputLevel: 'High' };
    const def = definition();
    def.parts[1]!.payload = b64(props);
    def.parts[2]!.payload = b64({ metadata: { type: 'Eventstream', displayName: `${name}_meta`, description: 'from platform' } });
    const u = await call(s.url, 'POST', `${esPath}/${c.body.id}/updateDefinition`, sp, { definition: def });
    assert.equal(u.status, 200, u.text);
    const g = await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp);
    assert.equal(g.body.displayName, name);
    const d = await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition`, sp);
    assert.deepEqual(JSON.parse(decode(d.body.definition.parts[1])), props);
    const m = await call(s.url, 'POST', `${esPath}/${c.body.id}/updateDefinition?updateMetadata=true`, sp, { definition: def });
    assert.equal(m.status, 200);
    const g2 = await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp);
    assert.equal(g2.body.displayName, `${name}_meta`);
    assert.equal(g2.body.description, 'from platform');
    const bad = await call(s.url, 'POST', `${esPath}/${c.body.id}/updateDefinition`, sp, { definition: { parts: [{ path: 'eventstream.json', payload: '!!', payloadType: 'InlineBase64' }] } });
    assertPlatformError(bad, 400, 'CorruptedPayload');
    const d2 = await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition`, sp);
    assert.deepEqual(JSON.parse(decode(d2.body.definition.parts[1])), props);
    // A .platform name taken by another eventstream of the workspace (any case) is 409, and nothing changes.
    const other = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('taken') });
    def.parts[1]!.payload = b64({ retentionTimeInDays: 2 });
    def.parts[2]!.payload = b64({ metadata: { type: 'Eventstream', displayName: other.body.displayName.toUpperCase() } });
    assertPlatformError(await call(s.url, 'POST', `${esPath}/${c.body.id}/updateDefinition?updateMetadata=true`, sp, { definition: def }), 409, 'ItemDisplayNameAlreadyInUse');
    assert.equal((await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp)).body.displayName, `${name}_meta`);
    const d3 = await call(s.url, 'POST', `${esPath}/${c.body.id}/getDefinition`, sp);
    assert.deepEqual(JSON.parse(decode(d3.body.definition.parts[1])), props);
  });

  test('another tenant cannot reach an item; unknown ids are 404 ItemNotFound; unknown routes answer in the platform envelope', async () => {
    const c = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('iso') });
    const eve = await userToken(s.url, identities.eve, ['api://stratus/platform/Item.ReadWrite.All']);
    assertPlatformError(await call(s.url, 'GET', `${esPath}/${c.body.id}`, eve), 404, 'WorkspaceNotFound');
    assertPlatformError(await call(s.url, 'GET', `${esPath}/${randomUUID()}`, sp), 404, 'ItemNotFound');
    assertPlatformError(await call(s.url, 'GET', `${esPath}/not-a-uuid`, sp), 404, 'ItemNotFound');
    assertPlatformError(await call(s.url, 'GET', `/v1/workspaces/not-a-uuid/eventstreams`, sp), 400, 'InvalidInput');
    const unknown = await call(s.url, 'GET', `/v1/nothing-here`, sp);
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.errorCode, 'string');
    assert.equal(unknown.body.requestId, unknown.headers.get('requestid'));
  });

  test('items survive a restart', async () => {
    const c = await call(s.url, 'POST', esPath, sp, { displayName: uniqueName('durable'), description: 'kept' });
    await s.restart();
    const g = await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp);
    assert.equal(g.status, 200);
    assert.deepEqual(g.body, c.body);
  });

  test('the generic /items collection serves the same eventstreams (create with type, list with a type filter, get, getDefinition, PATCH, DELETE)', async () => {
    const items = `/v1/workspaces/${ws}/items`;
    const name = uniqueName('generic');
    const c = await call(s.url, 'POST', items, sp, { displayName: name, type: 'Eventstream', folderId: null });
    assert.equal(c.status, 201, c.text);
    const noType = await call(s.url, 'POST', items, sp, { displayName: uniqueName() });
    assertPlatformError(noType, 400, 'InvalidInput');
    assert.deepEqual(noType.body.moreDetails, [{ errorCode: 'InvalidParameter', message: "The property 'type' is required when creating through /items." }]);
    assertPlatformError(await call(s.url, 'POST', items, sp, { displayName: uniqueName(), type: 'Notebook' }), 400, 'UnsupportedItemType');
    const g = await call(s.url, 'GET', `${items}/${c.body.id}`, sp);
    assert.deepEqual(g.body, c.body);
    const viaEs = await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp);
    assert.deepEqual(viaEs.body, c.body);
    const listed = await call(s.url, 'GET', `${items}?type=Eventstream`, sp);
    assert.ok(listed.body.value.some((x: any) => x.id === c.body.id));
    assert.deepEqual((await call(s.url, 'GET', `${items}?type=Notebook`, sp)).body, { value: [] });
    assertPlatformError(await call(s.url, 'GET', `${items}?type=Spreadsheet`, sp), 400, 'InvalidItemType');
    const def = await call(s.url, 'POST', `${items}/${c.body.id}/getDefinition`, sp);
    assert.equal(def.status, 200);
    assert.equal(def.body.definition.parts.length, 3);
    const u = await call(s.url, 'PATCH', `${items}/${c.body.id}`, sp, { description: 'generic' });
    assert.equal(u.body.description, 'generic');
    assert.equal((await call(s.url, 'DELETE', `${items}/${c.body.id}`, sp)).status, 200);
    assertPlatformError(await call(s.url, 'GET', `${esPath}/${c.body.id}`, sp), 404, 'ItemNotFound');
  });

  test('workspace discovery: the caller\'s workspaces, one workspace, its folders; nothing of other tenants', async () => {
    const mine = await call(s.url, 'GET', '/v1/workspaces', user);
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.value.map((w: any) => w.displayName).sort(), ['Stratus Demo', 'Stratus Sandbox']);
    assert.deepEqual(mine.body.value.find((w: any) => w.id === ws), { id: ws, displayName: 'Stratus Demo', description: 'The demo workspace.', type: 'Workspace' });
    const spWs = await call(s.url, 'GET', '/v1/workspaces', sp);
    assert.deepEqual(spWs.body.value.map((w: any) => w.id), [ws]);
    const one = await call(s.url, 'GET', `/v1/workspaces/${ws}`, user);
    assert.equal(one.body.displayName, 'Stratus Demo');
    const folders = await call(s.url, 'GET', `/v1/workspaces/${ws}/folders`, user);
    assert.deepEqual(folders.body, { value: [{ id: platformDemoFolder.id, displayName: 'Streams', workspaceId: ws }] });
    const eve = await userToken(s.url, identities.eve, ['api://stratus/platform/Item.ReadWrite.All']);
    const eves = await call(s.url, 'GET', '/v1/workspaces', eve);
    assert.deepEqual(eves.body.value.map((w: any) => w.displayName), ['Other Workspace']);
    assertPlatformError(await call(s.url, 'GET', `/v1/workspaces/${ws}/folders`, eve), 404, 'WorkspaceNotFound');
    assertPlatformError(await call(s.url, 'GET', '/v1/workspaces?continuationToken=%%%', eve), 400, 'InvalidContinuationToken');
  });

  // Last in the file: it moves the clock past the tokens' lifetime.
  test('an expired token is 401 TokenExpired with a Bearer challenge', async () => {
    await advance(s, 3600 + 120);
    const r = await call(s.url, 'GET', esPath, sp);
    assertPlatformError(r, 401, 'TokenExpired');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer authorization_uri="[^"]+", error="invalid_token"$/);
    const fresh = await appToken(s.url, 'platform');
    assert.equal((await call(s.url, 'GET', esPath, fresh)).status, 200);
  });
});
