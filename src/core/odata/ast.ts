/**
 * The syntax trees of OData `$filter` and `$orderby` (OData URL conventions §5.1.1, §5.1.2)
 * and the error of parsing or compiling them.
 */

/** A syntax error, an unknown property or an unsupported construct, with where it is. */
export class ODataError extends Error {
  /** 0-based character offset into the expression, when known. */
  readonly position: number | undefined;
  /** What went wrong. */
  readonly kind: 'syntax' | 'unknown_property' | 'type' | 'unsupported';
  /** The property path concerned, for `unknown_property` and `type`. */
  readonly property: string | undefined;
  constructor(message: string, kind: ODataError['kind'], position?: number, property?: string) {
    super(message);
    this.name = 'ODataError';
    this.kind = kind;
    this.position = position;
    this.property = property;
  }
}

/** Comparison operators. */
export type CompareOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

/** A literal value as written in the expression. */
export interface LiteralNode {
  kind: 'literal';
  type: 'string' | 'number' | 'boolean' | 'null' | 'datetime' | 'guid';
  /** string for string/guid/datetime (datetime normalised to ISO 8601 UTC with ms), number, boolean or null. */
  value: string | number | boolean | null;
  position: number;
}

/** A property path such as `amount/value` or, inside a lambda, `r/emailAddress/address`. */
export interface PropertyNode {
  kind: 'property';
  path: string[];
  position: number;
}

/** A function call, boolean (`contains`, `startswith`, `endswith`) or value (`tolower`, `toupper`). */
export interface CallNode {
  kind: 'call';
  name: string;
  args: ValueNode[];
  position: number;
}

/** An operand of a comparison. */
export type ValueNode = LiteralNode | PropertyNode | CallNode;

/** A boolean expression: the tree {@link parseFilter} returns. */
export type FilterNode =
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode; position: number }
  | { kind: 'not'; operand: FilterNode; position: number }
  | { kind: 'compare'; op: CompareOp; left: ValueNode; right: ValueNode; position: number }
  | { kind: 'in'; left: ValueNode; values: LiteralNode[]; position: number }
  | { kind: 'lambda'; op: 'any' | 'all'; collection: string[]; variable: string | undefined; predicate: FilterNode | undefined; position: number }
  | { kind: 'boolcall'; call: CallNode; position: number }
  | { kind: 'boolvalue'; value: PropertyNode | LiteralNode; position: number };

/** One `$orderby` item. */
export interface OrderByItem {
  /** Property path, `/`-separated as written. */
  path: string;
  direction: 'asc' | 'desc';
  position: number;
}
