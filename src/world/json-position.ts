/**
 * Positions in a JSON world file without the YAML reader (which takes seconds on a file of
 * several megabytes): `file:line:col` of a JSON pointer, found by scanning the text and skipping
 * the values before it. Each look-up is one pass over at most the text before the target.
 */

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** The index just after the string starting at `i` (a `"`). */
function skipString(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return i;
}

/** The index just after the value starting at `i`. */
function skipValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (; i < s.length; i++) {
      const d = s[i];
      if (d === '"') i = skipString(s, i) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return i;
  }
  while (i < s.length && !',}] \n\r\t'.includes(s[i]!)) i++;
  return i;
}

/** The start index of the value at `parts` below the value at `i`, as deep as it is found. */
function find(s: string, i: number, parts: string[]): number {
  for (const part of parts) {
    const open = s[i];
    if (open !== '{' && open !== '[') return i;
    let j = skipWs(s, i + 1);
    let index = 0;
    let found = -1;
    while (j < s.length && s[j] !== '}' && s[j] !== ']') {
      if (open === '{') {
        const end = skipString(s, j);
        const key = JSON.parse(s.slice(j, end)) as string;
        j = skipWs(s, end);
        j = skipWs(s, j + 1); // the colon
        if (key === part) found = j;
      } else if (String(index++) === part) found = j;
      if (found >= 0) break;
      j = skipWs(s, skipValue(s, j));
      if (s[j] === ',') j = skipWs(s, j + 1);
    }
    if (found < 0) return i;
    i = found;
  }
  return i;
}

/** The position finder of a JSON document: `file:line:col` of a pointer (`/tenants/0/users/1`), or of the deepest part found. */
export function jsonLocator(file: string, source: string): (pointer: string) => string {
  let lineStarts: number[] | undefined;
  return (pointer) => {
    const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const at = find(source, skipWs(source, 0), parts);
    if (!lineStarts) {
      lineStarts = [0];
      for (let k = source.indexOf('\n'); k >= 0; k = source.indexOf('\n', k + 1)) lineStarts.push(k + 1);
    }
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return `${file}:${lo + 1}:${at - lineStarts[lo]! + 1}`;
  };
}
