/**
 * Interned composite keys (`src/core/keys.ts`, issue 9): the same parts give the same key,
 * different parts a different one, also after the table started again past its bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyInterner } from '../src/core/keys.ts';

test('a key is the parts joined, the same for the same parts, different for different parts', () => {
  const k = new KeyInterner(':');
  const a = k.key('mail', 't1', 'app', 'u1');
  assert.equal(a, 'mail:t1:app:u1');
  assert.equal(k.key('mail', 't1', 'app', 'u1'), a);
  assert.equal(k.key('mail', 't1', 'app', 'u2'), 'mail:t1:app:u2');
  assert.equal(k.key('mail', 't1', 'app'), 'mail:t1:app', 'a shorter list that is a prefix of another has its own key');
  assert.equal(k.key('mail', `t${1}`, 'app', 'u1'), a, 'equal parts made anew give the same key');
});

test('past its bound the table starts again and keys stay right', () => {
  const k = new KeyInterner('\u0000', 3);
  for (let round = 0; round < 3; round++) for (let i = 0; i < 10; i++) assert.equal(k.key('x', String(i)), `x\u0000${i}`);
});
