/**
 * The tokenizer of OData `$filter` and `$orderby` expressions (OData ABNF): identifiers,
 * 'strings' (with '' escapes), numbers, GUIDs, dates and date-times, and punctuation, each
 * with its 0-based position.
 */
import { ODataError } from './ast.ts';

/** The kinds of token. */
export type TokenKind = 'ident' | 'string' | 'number' | 'datetime' | 'guid' | '(' | ')' | ',' | '/' | ':' | 'eof';
/** One token and its 0-based position. */
export interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

const guidRe = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/u;
const dateTimeRe = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?/u;
const numberRe = /^-?\d+(\.\d+)?([eE][+-]?\d+)?[mMdDfFlL]?/u;
const identRe = /^[A-Za-z_@$][A-Za-z0-9_.@$-]*/u;

/**
 * Splits a `$filter` or `$orderby` expression into tokens (white space dropped, `eof` last).
 * @throws ODataError `syntax` at the first character no token starts with.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/u.test(ch)) {
      i++;
      continue;
    }
    if ('(),/:'.includes(ch)) {
      tokens.push({ kind: ch as TokenKind, text: ch, pos: i });
      i++;
      continue;
    }
    if (ch === "'") {
      let j = i + 1;
      let value = '';
      for (;;) {
        if (j >= text.length) throw new ODataError(`Unterminated string literal at position ${i}.`, 'syntax', i);
        if (text[j] === "'") {
          if (text[j + 1] === "'") {
            value += "'";
            j += 2;
            continue;
          }
          break;
        }
        value += text[j];
        j++;
      }
      tokens.push({ kind: 'string', text: value, pos: i });
      i = j + 1;
      continue;
    }
    const rest = text.slice(i);
    const guid = guidRe.exec(rest);
    if (guid && !/[0-9A-Za-z-]/u.test(rest[guid[0].length] ?? '')) {
      tokens.push({ kind: 'guid', text: guid[0], pos: i });
      i += guid[0].length;
      continue;
    }
    const dt = /^\d{4}-\d{2}-\d{2}/u.test(rest) ? dateTimeRe.exec(rest) : null;
    if (dt) {
      tokens.push({ kind: 'datetime', text: dt[0], pos: i });
      i += dt[0].length;
      continue;
    }
    const num = numberRe.exec(rest);
    if (num && (ch !== '-' || /\d/u.test(rest[1] ?? ''))) {
      tokens.push({ kind: 'number', text: num[0].replace(/[mMdDfFlL]$/u, ''), pos: i });
      i += num[0].length;
      continue;
    }
    const id = identRe.exec(rest);
    if (id) {
      tokens.push({ kind: 'ident', text: id[0], pos: i });
      i += id[0].length;
      continue;
    }
    throw new ODataError(`Syntax error: unexpected character '${ch}' at position ${i}.`, 'syntax', i);
  }
  tokens.push({ kind: 'eof', text: '', pos: text.length });
  return tokens;
}
