/**
 * Keys and ids made on every request (issue 9): interned composite keys (`src/core/keys.ts`):
 * the same parts give the same key, different parts a different one, also after the table
 * started again past its bound; request ids (`newRequestUuid`) are distinct v4 UUIDs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyInterner } from '../src/core/keys.ts';
import { newRequestUuid } from '../src/core/ids.ts';

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
  // Bounded by characters too: a key longer than the bound is still made right, every time.
  const small = new KeyInterner(':', 1000, 16);
  const long = 'u'.repeat(40);
  for (let i = 0; i < 3; i++) assert.equal(small.key('a', long), `a:${long}`);
  assert.equal(small.key('a', 'b'), 'a:b');
});

test('request ids are distinct lower-case v4 UUIDs', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i++) {
    const id = newRequestUuid();
    if (i % 997 === 0) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 100_000);
});
