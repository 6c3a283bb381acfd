/**
 * OData query options shared by every API area: `$filter` and `$orderby` parsed to trees and
 * compiled to SQL over a field map. Usage:
 *
 * ```ts
 * const node = parseFilter(q.$filter);              // throws ODataError {position}
 * query = query.where(compileFilter(node, fields)); // throws ODataError {kind:'unknown_property'}
 * for (const o of compileOrderBy(parseOrderBy(q.$orderby), fields)) query = query.orderBy(o.column, o.direction);
 * ```
 * Map `ODataError` to the area's 400 (its message names the position or the property).
 */
export { ODataError, parseFilter, parseOrderBy, filterProperties } from './parse.ts';
export type { FilterNode, ValueNode, LiteralNode, PropertyNode, CallNode, CompareOp, OrderByItem } from './parse.ts';
export { compileFilter, compileOrderBy } from './compile.ts';
export type { FieldMap, FieldType, ScalarField, CollectionField, CompiledOrderBy } from './compile.ts';
