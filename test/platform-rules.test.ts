/** Pure rules of the platform area that the HTTP tests rely on (429 message date, names, definitions). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedUntil } from '../src/services/platform/access.ts';
import { checkDefinition, checkDisplayName } from '../src/services/platform/validate.ts';
import { definition, uniqueName } from './helpers/platform.ts';

test('the 429 message writes the end of the block as M/D/YYYY h:mm:ss AM|PM', () => {
  assert.equal(blockedUntil(Date.UTC(2025, 8, 3, 6, 54, 11)), '9/3/2025 6:54:11 AM');
  assert.equal(blockedUntil(Date.UTC(2025, 11, 31, 0, 5, 9)), '12/31/2025 12:05:09 AM');
  assert.equal(blockedUntil(Date.UTC(2025, 0, 1, 13, 0, 0)), '1/1/2025 1:00:00 PM');
});

test('the helpers build a definition and names that the rules accept; the rules refuse bad ones', () => {
  const d = checkDefinition(definition());
  assert.deepEqual(d.parts.map((p) => p.path), ['eventstream.json', 'eventstreamProperties.json', '.platform']);
  const n = uniqueName();
  assert.equal(checkDisplayName(n), n);
  const detail = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as { options: { details: { message: string }[] } }).options.details[0]!.message;
    }
    throw new Error('no error');
  };
  assert.match(detail(() => checkDisplayName(' lead')), /white space/);
  assert.match(detail(() => checkDisplayName('a'.repeat(124))), /at most 123/);
  assert.match(detail(() => checkDisplayName('lone \ud800 surrogate')), /lone surrogates/);
});
