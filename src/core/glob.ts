/**
 * The path globs of fault rules (issue 30 row 2): a small, bounded dialect matched by simulating
 * its automaton over the path, one pass, no backtracking — at most `pattern states × path
 * characters` steps whatever the pattern (picomatch's regular expressions backtracked
 * exponentially on a caller's path: the rule of issue 30 row 2 against 200 `a`s held the event loop ≥ 30 s).
 *
 * The dialect (documented in docs/console.md):
 * - `*` any run of characters within one path segment (no `/`), `?` one such character;
 * - `**` any run of characters across segments; a `**` segment between two slashes also matches
 *   a single `/`, a leading `**` segment also matches nothing, and a trailing `/**` also matches
 *   the end of the path;
 * - every other character is itself (no classes, braces or escapes); matching ignores case.
 * Patterns are at most {@link maxGlobLength} characters.
 */

/** The longest pattern accepted (characters). */
export const maxGlobLength = 256;

/** One state of the automaton. */
type State =
  | { k: 'lit'; c: number }
  | { k: 'one' } // one character, not '/'
  | { k: 'star' } // any run without '/'
  | { k: 'globstar' } // any run
  | { k: 'skip'; to: number }; // epsilon to the next state or to `to`

const slash = 0x2f;

/** Compiles `pattern` into its states (the accepting state is `states.length`). */
function compile(pattern: string): State[] {
  const p = pattern.toLowerCase();
  const out: State[] = [];
  let i = 0;
  // A leading `**/`: optionally any run then '/'.
  if (p.startsWith('**/')) {
    const at = out.push({ k: 'skip', to: -1 }) - 1;
    out.push({ k: 'globstar' }, { k: 'lit', c: slash });
    (out[at] as { to: number }).to = out.length;
    i = 3;
  }
  while (i < p.length) {
    if (p.startsWith('/**', i) && (i + 3 === p.length || p[i + 3] === '/')) {
      if (i + 3 === p.length) {
        // A trailing `/**`: optionally '/' then any run.
        const at = out.push({ k: 'skip', to: -1 }) - 1;
        out.push({ k: 'lit', c: slash }, { k: 'globstar' });
        (out[at] as { to: number }).to = out.length;
        i += 3;
      } else {
        // `/**/`: '/', then optionally any run and '/'.
        out.push({ k: 'lit', c: slash });
        const at = out.push({ k: 'skip', to: -1 }) - 1;
        out.push({ k: 'globstar' }, { k: 'lit', c: slash });
        (out[at] as { to: number }).to = out.length;
        i += 4;
      }
      continue;
    }
    if (p.startsWith('**', i)) {
      out.push({ k: 'globstar' });
      while (p[i] === '*') i++;
      continue;
    }
    const ch = p[i]!;
    out.push(ch === '*' ? { k: 'star' } : ch === '?' ? { k: 'one' } : { k: 'lit', c: p.charCodeAt(i) });
    i++;
  }
  return out;
}

/**
 * A matcher for `pattern` (see the file comment): `(path) => boolean`, linear in the path's length.
 * @throws Error when the pattern is longer than {@link maxGlobLength}
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  if (pattern.length > maxGlobLength) throw new Error(`a path glob is at most ${maxGlobLength} characters`);
  const states = compile(pattern);
  const end = states.length;
  const n = end + 1;
  // What each state reaches without consuming a character (itself included), computed once.
  const closure: Int32Array[] = [];
  for (let s = 0; s < n; s++) {
    const seen = new Set<number>();
    const stack = [s];
    while (stack.length) {
      const x = stack.pop()!;
      if (seen.has(x)) continue;
      seen.add(x);
      if (x === end) continue;
      const st = states[x]!;
      if (st.k === 'skip') stack.push(x + 1, st.to);
      else if (st.k === 'star' || st.k === 'globstar') stack.push(x + 1);
    }
    closure.push(Int32Array.from(seen));
  }
  return (path: string) => {
    const text = path.toLowerCase();
    // Two state lists and a generation stamp, so a state is added once per step.
    let cur = new Int32Array(n);
    let next = new Int32Array(n);
    const seen = new Int32Array(n);
    let stamp = 1;
    let nextLen = 0;
    const add = (s: number) => {
      const c = closure[s]!;
      for (let k = 0; k < c.length; k++) {
        const x = c[k]!;
        if (seen[x] === stamp) continue;
        seen[x] = stamp;
        next[nextLen++] = x;
      }
    };
    add(0);
    [cur, next] = [next, cur];
    let curLen = nextLen;
    for (let i = 0; i < text.length && curLen > 0; i++) {
      const c = text.charCodeAt(i);
      stamp++;
      nextLen = 0;
      for (let j = 0; j < curLen; j++) {
        const x = cur[j]!;
        if (x === end) continue;
        const st = states[x]!;
        if (st.k === 'lit') {
          if (st.c === c) add(x + 1);
        } else if (st.k === 'one') {
          if (c !== slash) add(x + 1);
        } else if (st.k === 'star') {
          if (c !== slash) add(x);
        } else if (st.k === 'globstar') add(x);
      }
      [cur, next] = [next, cur];
      curLen = nextLen;
    }
    for (let j = 0; j < curLen; j++) if (cur[j] === end) return true;
    return false;
  };
}
