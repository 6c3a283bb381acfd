/**
 * Compiles parsed OData `$filter` / `$orderby` trees to SQL over an area's columns, through a
 * {@link FieldMap} that names which properties exist, their types and where they live. The
 * output is a Kysely expression (`.where(expr)`) with every literal bound as a parameter, so
 * it runs on SQLite and PostgreSQL alike and uses the columns' indexes.
 *
 * Semantics chosen where OData leaves room (documented in docs/deviations.md):
 * - `contains`, `startswith`, `endswith` compare case-insensitively (as the real services do);
 * - `eq`/`ne` on a field marked `caseInsensitive` compare lower-cased; otherwise exactly;
 * - `eq null` / `ne null` become `IS NULL` / `IS NOT NULL`;
 * - booleans are stored as 0/1, date-times as ISO 8601 UTC strings with milliseconds.
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { ODataError, type CallNode, type CompareOp, type FilterNode, type LiteralNode, type OrderByItem, type ValueNode } from './parse.ts';

/** Types a scalar field can have. */
export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'guid' | 'enum';

/** A property stored in one column. */
export interface ScalarField {
  /** Column, qualified if the query joins (`messages.subject`). */
  column: string;
  type: FieldType;
  /** Whether `$filter` may use it (default true). */
  filterable?: boolean;
  /** Whether `$orderby` may use it (default true). */
  sortable?: boolean;
  /** `eq`/`ne`/`in` compare lower-cased (the column should hold, or be indexed on, lower case). */
  caseInsensitive?: boolean;
  /** For `enum`: the allowed values; literals match them case-insensitively and are bound in this spelling. */
  values?: readonly string[];
}

/**
 * A collection property stored in a child table, usable in `any`/`all` lambdas:
 * `categories/any(c: c eq 'Red')`, `toRecipients/any(r: r/emailAddress/address eq '…')`.
 */
export interface CollectionField {
  type: 'collection';
  /** The child table. */
  table: string;
  /** Its column that points at the parent row. */
  parentKey: string;
  /** The parent row's column it points at (qualified if needed). */
  parentColumn: string;
  /** Fields of one element, keyed by path relative to the element; `''` is a primitive element itself. Columns are bare names of the child table. */
  fields: FieldMap;
  filterable?: boolean;
}

/** OData property path (`/`-separated, as clients write it) → where it lives. */
export type FieldMap = Record<string, ScalarField | CollectionField>;

/** One compiled ordering term. */
export interface CompiledOrderBy {
  column: string;
  direction: 'asc' | 'desc';
  /** The OData path it came from. */
  path: string;
  type: FieldType;
}

interface Scope {
  fields: FieldMap;
  /** Table alias prefixed to columns (lambda scopes). */
  alias?: string;
  /** The lambda variable of this scope. */
  variable?: string;
  outer?: Scope;
}

interface CompiledValue {
  expr: RawBuilder<unknown>;
  type: FieldType;
  caseInsensitive: boolean;
  field?: ScalarField;
  path: string;
  /** Whether `expr` is already lower-cased (tolower). */
  lowered: boolean;
}

function lookup(fields: FieldMap, path: string): ScalarField | CollectionField | undefined {
  if (Object.hasOwn(fields, path)) return fields[path];
  const lower = path.toLowerCase();
  const key = Object.keys(fields).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : fields[key];
}

let aliasCounter = 0;

/**
 * Binds a number so that PostgreSQL never has to fit it into the column's integer type
 * (`amount gt 1.5` or `count eq 99999999999` on an `integer` column): int32 values bind
 * as they are (index-friendly), larger integers as `bigint`, fractions as `double precision`.
 * Other values pass through.
 */
function numberParam(v: unknown): unknown {
  if (typeof v !== 'number') return v;
  if (Number.isInteger(v) && Math.abs(v) <= 2_147_483_647) return v;
  if (Number.isSafeInteger(v)) return sql`cast(${v} as bigint)`;
  return sql`cast(${v} as double precision)`;
}

class Compiler {
  compile(node: FilterNode, scope: Scope): RawBuilder<SqlBool> {
    switch (node.kind) {
      case 'and':
        return sql<SqlBool>`(${this.compile(node.left, scope)} and ${this.compile(node.right, scope)})`;
      case 'or':
        return sql<SqlBool>`(${this.compile(node.left, scope)} or ${this.compile(node.right, scope)})`;
      case 'not':
        return sql<SqlBool>`(not ${this.compile(node.operand, scope)})`;
      case 'compare':
        return this.compare(node.op, node.left, node.right, scope, node.position);
      case 'in': {
        const left = this.value(node.left, scope);
        if (node.values.length === 0) return sql<SqlBool>`(1 = 0)`;
        const params = node.values.map((v) => numberParam(this.coerce(v, left)));
        const target = left.caseInsensitive && !left.lowered ? sql`lower(${left.expr})` : left.expr;
        return sql<SqlBool>`(${target} in (${sql.join(params)}))`;
      }
      case 'boolcall':
        return this.boolCall(node.call, scope);
      case 'boolvalue': {
        if (node.value.kind === 'literal') return node.value.value === true ? sql<SqlBool>`(1 = 1)` : sql<SqlBool>`(1 = 0)`;
        const v = this.value(node.value, scope);
        if (v.type !== 'boolean') throw new ODataError(`Property '${v.path}' at position ${node.position} is not a boolean; compare it with an operator.`, 'type', node.position, v.path);
        return sql<SqlBool>`(${v.expr} = 1)`;
      }
      case 'lambda':
        return this.lambda(node, scope);
    }
  }

  private lambda(node: Extract<FilterNode, { kind: 'lambda' }>, scope: Scope): RawBuilder<SqlBool> {
    const path = node.collection.join('/');
    const resolved = this.resolve(node.collection, scope, node.position);
    if (resolved.field.type !== 'collection') throw new ODataError(`Property '${path}' at position ${node.position} is not a collection; '${node.op}' needs one.`, 'type', node.position, path);
    const coll = resolved.field;
    const alias = `odl${++aliasCounter}`;
    const parent = resolved.scope.alias ? `${resolved.scope.alias}.${coll.parentColumn}` : coll.parentColumn;
    const join = sql`${sql.ref(`${alias}.${coll.parentKey}`)} = ${sql.ref(parent)}`;
    const from = sql`${sql.table(coll.table)} ${sql.id(alias)}`;
    if (!node.predicate) return sql<SqlBool>`(exists (select 1 from ${from} where ${join}))`;
    const inner = this.compile(node.predicate, { fields: coll.fields, alias, variable: node.variable, outer: scope });
    if (node.op === 'any') return sql<SqlBool>`(exists (select 1 from ${from} where ${join} and ${inner}))`;
    return sql<SqlBool>`(not exists (select 1 from ${from} where ${join} and not ${inner}))`;
  }

  /** Finds the field a path names, walking out of lambda scopes by variable name. */
  private resolve(path: string[], scope: Scope, position: number): { field: ScalarField | CollectionField; scope: Scope } {
    let s: Scope | undefined = scope;
    while (s) {
      if (s.variable !== undefined) {
        if (path[0] === s.variable) {
          const rel = path.slice(1).join('/');
          const f = lookup(s.fields, rel) ?? (rel === '' ? lookup(s.fields, '$it') : undefined);
          if (!f) break;
          return { field: f, scope: s };
        }
      } else {
        const f = lookup(s.fields, path.join('/'));
        if (f) return { field: f, scope: s };
        break;
      }
      s = s.outer;
    }
    const name = path.join('/');
    throw new ODataError(`Could not find a property named '${name}' (position ${position}).`, 'unknown_property', position, name);
  }

  private value(v: ValueNode, scope: Scope): CompiledValue {
    if (v.kind === 'property') {
      const { field, scope: s } = this.resolve(v.path, scope, v.position);
      const path = v.path.join('/');
      if (field.type === 'collection') throw new ODataError(`Property '${path}' at position ${v.position} is a collection; use any() or all().`, 'type', v.position, path);
      if (field.filterable === false) throw new ODataError(`Property '${path}' at position ${v.position} cannot be used in a filter.`, 'unsupported', v.position, path);
      const column = s.alias ? `${s.alias}.${field.column}` : field.column;
      return { expr: sql`${sql.ref(column)}`, type: field.type, caseInsensitive: !!field.caseInsensitive, field, path, lowered: false };
    }
    if (v.kind === 'call') {
      if (v.name !== 'tolower' && v.name !== 'toupper' && v.name !== 'trim' && v.name !== 'length') {
        throw new ODataError(`Function '${v.name}' at position ${v.position} returns a boolean and cannot be compared.`, 'type', v.position);
      }
      const arg = this.value(v.args[0]!, scope);
      if (arg.type !== 'string' && arg.type !== 'enum') throw new ODataError(`Function '${v.name}' at position ${v.position} needs a string argument.`, 'type', v.position, arg.path);
      if (v.name === 'length') return { ...arg, expr: sql`length(${arg.expr})`, type: 'number', caseInsensitive: false, lowered: false };
      if (v.name === 'trim') return { ...arg, expr: sql`trim(${arg.expr})` };
      return { ...arg, expr: v.name === 'tolower' ? sql`lower(${arg.expr})` : sql`upper(${arg.expr})`, caseInsensitive: false, lowered: v.name === 'tolower' };
    }
    throw new ODataError(`Expected a property at position ${v.position}.`, 'syntax', v.position);
  }

  /** A literal bound to the type of the value it is compared with. */
  private coerce(lit: LiteralNode, target: CompiledValue): unknown {
    const fail = (): never => {
      throw new ODataError(`A ${lit.type} literal at position ${lit.position} cannot be compared with '${target.path}' of type ${target.type}.`, 'type', lit.position, target.path);
    };
    switch (target.type) {
      case 'string':
        if (lit.type !== 'string' && lit.type !== 'guid' && lit.type !== 'datetime') fail();
        return target.caseInsensitive && !target.lowered ? String(lit.value).toLowerCase() : lit.value;
      case 'enum': {
        if (lit.type !== 'string') fail();
        const s = String(lit.value);
        const values = target.field?.values;
        if (values) {
          const match = values.find((x) => x.toLowerCase() === s.toLowerCase());
          if (match === undefined) throw new ODataError(`'${s}' at position ${lit.position} is not a value of '${target.path}' (one of: ${values.join(', ')}).`, 'type', lit.position, target.path);
          return target.caseInsensitive ? match.toLowerCase() : match;
        }
        return target.caseInsensitive ? s.toLowerCase() : s;
      }
      case 'number':
        if (lit.type !== 'number') fail();
        return lit.value;
      case 'boolean':
        if (lit.type !== 'boolean') fail();
        return lit.value ? 1 : 0;
      case 'guid':
        if (lit.type !== 'guid' && lit.type !== 'string') fail();
        return String(lit.value).toLowerCase();
      case 'datetime': {
        if (lit.type === 'datetime') return lit.value;
        if (lit.type === 'string') {
          const d = new Date(String(lit.value));
          if (!Number.isNaN(d.getTime())) return d.toISOString();
        }
        return fail();
      }
    }
  }

  private compare(op: CompareOp, leftNode: ValueNode, rightNode: ValueNode, scope: Scope, position: number): RawBuilder<SqlBool> {
    let l = leftNode;
    let r = rightNode;
    if (l.kind === 'literal' && r.kind !== 'literal') {
      [l, r] = [r, l];
      op = ({ eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const)[op];
    }
    if (l.kind === 'literal') throw new ODataError(`Syntax error at position ${position}: a comparison needs a property on one side.`, 'syntax', position);
    const left = this.value(l, scope);
    const sqlOp = sql.raw({ eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op]);
    if (r.kind === 'literal') {
      if (r.type === 'null') {
        if (op === 'eq') return sql<SqlBool>`(${left.expr} is null)`;
        if (op === 'ne') return sql<SqlBool>`(${left.expr} is not null)`;
        throw new ODataError(`Only 'eq' and 'ne' compare with null (position ${position}).`, 'type', position, left.path);
      }
      if (left.type === 'boolean' && op !== 'eq' && op !== 'ne') throw new ODataError(`Booleans compare only with 'eq' and 'ne' (position ${position}).`, 'type', position, left.path);
      const value = numberParam(this.coerce(r, left));
      const target = left.caseInsensitive && !left.lowered && (left.type === 'string' || left.type === 'enum') ? sql`lower(${left.expr})` : left.expr;
      if (op === 'ne') return sql<SqlBool>`(${target} is null or ${target} <> ${value})`;
      return sql<SqlBool>`(${target} ${sqlOp} ${value})`;
    }
    const right = this.value(r, scope);
    if (left.type !== right.type) throw new ODataError(`'${left.path}' (${left.type}) and '${right.path}' (${right.type}) cannot be compared (position ${position}).`, 'type', position);
    return sql<SqlBool>`(${left.expr} ${sqlOp} ${right.expr})`;
  }

  private boolCall(call: CallNode, scope: Scope): RawBuilder<SqlBool> {
    const [a, b] = call.args as [ValueNode, ValueNode];
    if (a.kind === 'literal') throw new ODataError(`The first argument of '${call.name}' at position ${call.position} must be a property.`, 'syntax', call.position);
    const target = this.value(a, scope);
    if (target.type !== 'string' && target.type !== 'enum') throw new ODataError(`'${call.name}' at position ${call.position} needs a string property; '${target.path}' is ${target.type}.`, 'type', call.position, target.path);
    if (b.kind !== 'literal' || b.type !== 'string') throw new ODataError(`The second argument of '${call.name}' at position ${call.position} must be a string literal.`, 'type', call.position);
    const needle = String(b.value).toLowerCase().replace(/[\\%_]/gu, (c) => `\\${c}`);
    const pattern = call.name === 'contains' ? `%${needle}%` : call.name === 'startswith' ? `${needle}%` : `%${needle}`;
    const expr = target.lowered ? target.expr : sql`lower(${target.expr})`;
    return sql<SqlBool>`(${expr} like ${pattern} escape ${sql.lit('\\')})`;
  }
}

/**
 * Compiles a parsed filter to a SQL boolean expression over `fields`.
 * @returns an expression for Kysely's `.where(expr)`
 * @throws ODataError `unknown_property` for a path not in `fields`, `type` for a literal of the
 *   wrong type, `unsupported` for a non-filterable property
 */
export function compileFilter(node: FilterNode, fields: FieldMap): Expression<SqlBool> {
  return new Compiler().compile(node, { fields });
}

/**
 * Compiles parsed `$orderby` items to columns and directions.
 * @throws ODataError `unknown_property` / `unsupported` for an unknown or unsortable path
 */
export function compileOrderBy(items: OrderByItem[], fields: FieldMap): CompiledOrderBy[] {
  return items.map((item) => {
    const f = lookup(fields, item.path);
    if (!f) throw new ODataError(`Could not find a property named '${item.path}' (position ${item.position}).`, 'unknown_property', item.position, item.path);
    if (f.type === 'collection' || f.sortable === false) throw new ODataError(`Property '${item.path}' (position ${item.position}) cannot be used to order results.`, 'unsupported', item.position, item.path);
    return { column: f.column, direction: item.direction, path: item.path, type: f.type };
  });
}
