import { beforeEach, inject } from 'vitest';

// A clean store before each test: the control plane's reset (the control key guards it).
beforeEach(async () => {
  const { httpOrigin, controlKey } = inject('stratus');
  const res = await fetch(`${httpOrigin}/_stratus/reset`, { method: 'POST', headers: { authorization: `Bearer ${controlKey}` } });
  if (!res.ok) throw new Error(`Stratus reset answered ${res.status}`);
});
