/**
 * OData v4 `$filter` and `$orderby` parsing (OData URL conventions §5.1.1, §5.1.2): text →
 * syntax tree, with the 0-based position of the first offending character on error.
 *
 * Grammar (precedence low → high): `or`, `and`, `not`, comparison (`eq ne gt ge lt le`,
 * `in (…)`), primary (parenthesised expression, function call, lambda `any`/`all`,
 * property path, literal). Literals: 'strings' (with '' escapes), numbers, `true`, `false`,
 * `null`, GUIDs, dates and date-times (unquoted, as OData writes them).
 */
import { ODataError, type CompareOp, type FilterNode, type LiteralNode, type OrderByItem, type ValueNode } from './ast.ts';
import { tokenize, type Token, type TokenKind } from './tokens.ts';

export { ODataError, type CallNode, type CompareOp, type FilterNode, type LiteralNode, type OrderByItem, type PropertyNode, type ValueNode } from './ast.ts';

const compareOps = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);
const boolFunctions = new Set(['contains', 'startswith', 'endswith']);
const valueFunctions = new Set(['tolower', 'toupper', 'trim', 'length']);

/** Deepest nesting of parentheses, `not` and lambdas a filter may have. */
export const maxFilterDepth = 100;
/** Most comparisons and function calls one filter may hold. */
export const maxFilterTerms = 300;

class Parser {
  private i = 0;
  private depth = 0;
  private terms = 0;
  constructor(private readonly tokens: Token[]) {}

  private enter(t: Token): void {
    if (++this.depth > maxFilterDepth) throw new ODataError(`The filter nests deeper than ${maxFilterDepth} levels at position ${t.pos}.`, 'unsupported', t.pos);
  }
  private term(pos: number): void {
    if (++this.terms > maxFilterTerms) throw new ODataError(`The filter has more than ${maxFilterTerms} terms (position ${pos}).`, 'unsupported', pos);
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private isWord(t: Token, word: string): boolean {
    return t.kind === 'ident' && t.text.toLowerCase() === word;
  }
  private expect(kind: TokenKind, what: string): Token {
    const t = this.next();
    if (t.kind !== kind) throw this.unexpected(t, what);
    return t;
  }
  unexpected(t: Token, expected: string): ODataError {
    const found = t.kind === 'eof' ? 'end of expression' : `'${t.kind === 'string' ? `'${t.text}'` : t.text}'`;
    return new ODataError(`Syntax error at position ${t.pos}: expected ${expected}, found ${found}.`, 'syntax', t.pos);
  }

  parseAll(): FilterNode {
    if (this.peek().kind === 'eof') throw new ODataError('The filter expression is empty.', 'syntax', 0);
    const node = this.parseOr();
    const t = this.peek();
    if (t.kind !== 'eof') throw this.unexpected(t, "'and', 'or' or the end of the expression");
    return node;
  }

  parseOr(): FilterNode {
    let left = this.parseAnd();
    while (this.isWord(this.peek(), 'or')) {
      const t = this.next();
      left = { kind: 'or', left, right: this.parseAnd(), position: t.pos };
    }
    return left;
  }

  private parseAnd(): FilterNode {
    let left = this.parseUnary();
    while (this.isWord(this.peek(), 'and')) {
      const t = this.next();
      left = { kind: 'and', left, right: this.parseUnary(), position: t.pos };
    }
    return left;
  }

  private parseUnary(): FilterNode {
    const t = this.peek();
    if (this.isWord(t, 'not') && !(this.peek(1).kind === '/')) {
      this.next();
      this.enter(t);
      const operand = this.parseUnary();
      this.depth--;
      return { kind: 'not', operand, position: t.pos };
    }
    return this.parseComparison();
  }

  private parseComparison(): FilterNode {
    const t = this.peek();
    if (t.kind === '(') {
      this.next();
      this.enter(t);
      const inner = this.parseOr();
      this.expect(')', "')'");
      this.depth--;
      return inner;
    }
    this.term(t.pos);
    const left = this.parseValueOrLambda();
    if ('kind' in left && (left.kind === 'lambda')) return left;
    const value = left as ValueNode;
    const op = this.peek();
    if (op.kind === 'ident' && compareOps.has(op.text.toLowerCase())) {
      this.next();
      const right = this.parseValueOrLambda();
      if (right.kind === 'lambda') throw new ODataError(`Syntax error at position ${right.position}: a lambda cannot be compared.`, 'syntax', right.position);
      return { kind: 'compare', op: op.text.toLowerCase() as CompareOp, left: value, right: right as ValueNode, position: op.pos };
    }
    if (this.isWord(op, 'in')) {
      this.next();
      this.expect('(', "'(' after 'in'");
      const values: LiteralNode[] = [];
      for (;;) {
        const v = this.parseValueOrLambda();
        if (v.kind !== 'literal') throw new ODataError(`Syntax error at position ${v.position}: 'in' takes a list of literals.`, 'syntax', v.position);
        values.push(v);
        const sep = this.next();
        if (sep.kind === ')') break;
        if (sep.kind !== ',') throw this.unexpected(sep, "',' or ')'");
      }
      return { kind: 'in', left: value, values, position: op.pos };
    }
    if (value.kind === 'call') {
      if (!boolFunctions.has(value.name)) throw new ODataError(`Syntax error at position ${value.position}: '${value.name}' does not return a boolean; compare it with an operator.`, 'syntax', value.position);
      return { kind: 'boolcall', call: value, position: value.position };
    }
    if (value.kind === 'property' || (value.kind === 'literal' && value.type === 'boolean')) return { kind: 'boolvalue', value, position: value.position };
    throw this.unexpected(op, 'a comparison operator');
  }

  private parseValueOrLambda(): ValueNode | Extract<FilterNode, { kind: 'lambda' }> {
    const t = this.next();
    switch (t.kind) {
      case 'string':
        return { kind: 'literal', type: 'string', value: t.text, position: t.pos };
      case 'number': {
        const n = Number(t.text);
        if (!Number.isFinite(n)) throw new ODataError(`Invalid number '${t.text}' at position ${t.pos}.`, 'syntax', t.pos);
        return { kind: 'literal', type: 'number', value: n, position: t.pos };
      }
      case 'guid':
        return { kind: 'literal', type: 'guid', value: t.text.toLowerCase(), position: t.pos };
      case 'datetime': {
        const d = new Date(/T/u.test(t.text) && !/(Z|[+-]\d{2}:\d{2})$/u.test(t.text) ? `${t.text}Z` : t.text);
        if (Number.isNaN(d.getTime())) throw new ODataError(`Invalid date-time '${t.text}' at position ${t.pos}.`, 'syntax', t.pos);
        return { kind: 'literal', type: 'datetime', value: d.toISOString(), position: t.pos };
      }
      case 'ident':
        break;
      default:
        throw this.unexpected(t, 'a property, a literal or a function');
    }
    const word = t.text.toLowerCase();
    if (word === 'true' || word === 'false') return { kind: 'literal', type: 'boolean', value: word === 'true', position: t.pos };
    if (word === 'null') return { kind: 'literal', type: 'null', value: null, position: t.pos };
    if (this.peek().kind === '(') {
      if (!boolFunctions.has(word) && !valueFunctions.has(word)) throw new ODataError(`Unsupported function '${t.text}' at position ${t.pos}.`, 'unsupported', t.pos);
      this.next();
      this.enter(t);
      const args: ValueNode[] = [];
      if (this.peek().kind !== ')') {
        for (;;) {
          const a = this.parseValueOrLambda();
          if (a.kind === 'lambda') throw new ODataError(`Syntax error at position ${a.position}: a lambda is not a function argument.`, 'syntax', a.position);
          args.push(a);
          const sep = this.next();
          if (sep.kind === ')') break;
          if (sep.kind !== ',') throw this.unexpected(sep, "',' or ')'");
        }
      } else this.next();
      this.depth--;
      const arity = boolFunctions.has(word) ? 2 : 1;
      if (args.length !== arity) throw new ODataError(`Function '${word}' at position ${t.pos} takes ${arity} argument${arity > 1 ? 's' : ''}, got ${args.length}.`, 'syntax', t.pos);
      return { kind: 'call', name: word, args, position: t.pos };
    }
    const path = [t.text];
    while (this.peek().kind === '/') {
      this.next();
      const seg = this.expect('ident', 'a property name after /');
      const segWord = seg.text.toLowerCase();
      if ((segWord === 'any' || segWord === 'all') && this.peek().kind === '(') {
        this.next();
        if (this.peek().kind === ')') {
          this.next();
          if (segWord === 'all') throw new ODataError(`Syntax error at position ${seg.pos}: all() needs a predicate.`, 'syntax', seg.pos);
          return { kind: 'lambda', op: 'any', collection: path, variable: undefined, predicate: undefined, position: seg.pos };
        }
        const variable = this.expect('ident', 'a lambda variable name').text;
        this.expect(':', "':' after the lambda variable");
        this.enter(seg);
        const predicate = this.parseOr();
        this.expect(')', "')' closing the lambda");
        this.depth--;
        return { kind: 'lambda', op: segWord, collection: path, variable, predicate, position: seg.pos };
      }
      path.push(seg.text);
    }
    return { kind: 'property', path, position: t.pos };
  }
}

/**
 * Parses a `$filter` expression.
 * @throws ODataError (kind `syntax` or `unsupported`) with the position of the problem
 */
export function parseFilter(text: string): FilterNode {
  rejectControlCharacters(text);
  return new Parser(tokenize(text)).parseAll();
}

/** NUL and other C0 control characters (except tab, CR, LF) never belong in an expression. */
function rejectControlCharacters(text: string): void {
  const m = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/u.exec(text);
  if (m) throw new ODataError(`Syntax error: control character U+${m[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()} at position ${m.index}.`, 'syntax', m.index);
}

/**
 * Parses a `$orderby` list: `path [asc|desc] (, path [asc|desc])*`.
 * @throws ODataError (kind `syntax`) with the position of the problem
 */
export function parseOrderBy(text: string): OrderByItem[] {
  rejectControlCharacters(text);
  const tokens = tokenize(text);
  const items: OrderByItem[] = [];
  let i = 0;
  const unexpected = (t: Token, what: string) =>
    new ODataError(`Syntax error at position ${t.pos}: expected ${what}, found ${t.kind === 'eof' ? 'end of expression' : `'${t.text}'`}.`, 'syntax', t.pos);
  if (tokens[0]!.kind === 'eof') throw new ODataError('The orderby expression is empty.', 'syntax', 0);
  for (;;) {
    const first = tokens[i++]!;
    if (first.kind !== 'ident') throw unexpected(first, 'a property name');
    const path = [first.text];
    while (tokens[i]!.kind === '/') {
      i++;
      const seg = tokens[i++]!;
      if (seg.kind !== 'ident') throw unexpected(seg, 'a property name after /');
      path.push(seg.text);
    }
    let direction: 'asc' | 'desc' = 'asc';
    const dir = tokens[i]!;
    if (dir.kind === 'ident' && (dir.text.toLowerCase() === 'asc' || dir.text.toLowerCase() === 'desc')) {
      direction = dir.text.toLowerCase() as 'asc' | 'desc';
      i++;
    }
    items.push({ path: path.join('/'), direction, position: first.pos });
    const sep = tokens[i++]!;
    if (sep.kind === 'eof') break;
    if (sep.kind !== ',') throw unexpected(sep, "',', 'asc', 'desc' or the end of the expression");
  }
  return items;
}

/** Every property path a filter reads, in order of appearance (lambda collections included). */
export function filterProperties(node: FilterNode): string[] {
  const out: string[] = [];
  const value = (v: ValueNode) => {
    if (v.kind === 'property') out.push(v.path.join('/'));
    else if (v.kind === 'call') v.args.forEach(value);
  };
  const walk = (n: FilterNode) => {
    switch (n.kind) {
      case 'and':
      case 'or':
        walk(n.left);
        walk(n.right);
        break;
      case 'not':
        walk(n.operand);
        break;
      case 'compare':
        value(n.left);
        value(n.right);
        break;
      case 'in':
        value(n.left);
        break;
      case 'lambda':
        out.push(n.collection.join('/'));
        break;
      case 'boolcall':
        value(n.call);
        break;
      case 'boolvalue':
        value(n.value);
        break;
    }
  };
  walk(node);
  return out;
}
