/**
 * Request input of resource-manager operations, shared by every ARM area (spec:
 * resource-manager §4, §7, §8): query values under several spellings, skip tokens, path names,
 * OData options, and the JSON body with its members ({@link ArmInput}). Each helper takes the
 * area's error factories, so each area keeps its codes (`InvalidParameter`,
 * `InvalidRequestContent`, …) and its envelope.
 */
import type { FastifyRequest } from 'fastify';
import type { ApiError } from '../../core/errors/index.ts';
import { decodeToken } from '../../core/paging.ts';
import { ODataError } from '../../core/odata/index.ts';
import { firstValue, isJsonContent, nulPath } from '../../core/input.ts';

/** A query value under the first of `names` present (`$filter` / `filter`, …); a repeated parameter gives its first value. */
export function queryValue(req: FastifyRequest, ...names: string[]): string | undefined {
  const q = req.query as Record<string, unknown>;
  for (const n of names) {
    const v = firstValue(q[n]);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * A query value that must be given at most once.
 * @throws `repeated(name)` when the parameter is repeated.
 */
export function singleQueryValue(req: FastifyRequest, name: string, repeated: (name: string) => ApiError): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(v)) throw repeated(name);
  return v;
}

/**
 * The decoded skip token of a list request (read under the first of `names` present);
 * undefined when absent.
 * @throws `invalid(token)` when it does not decode, holds U+0000 (a forged token) or `valid` refuses it.
 */
export function skipToken<T extends object>(req: FastifyRequest, names: string[], valid: (t: T) => boolean, invalid: (token: string) => ApiError): T | undefined {
  const token = queryValue(req, ...names);
  if (token === undefined) return undefined;
  const t = decodeToken<T>(token);
  if (!t || nulPath(t) !== undefined || !valid(t)) throw invalid(token);
  return t;
}

/**
 * Refuses a path name holding a `/` (sent as `%2F`) or a control character (`%00`…).
 * @throws `invalid(param, value)` with the value JSON-escaped (control characters visible).
 */
export function pathNamesCheck(req: FastifyRequest, invalid: (param: string, value: string) => ApiError): void {
  for (const [k, v] of Object.entries(req.params as Record<string, string>)) {
    if (typeof v === 'string' && /[/\u0000-\u001f\u007f]/u.test(v)) throw invalid(k, JSON.stringify(v).slice(1, -1));
  }
}

/**
 * Compiles an OData option (`$filter`, `$orderby`) with `compile` when it is given and not
 * blank; undefined otherwise.
 * @throws `invalid(message)` for an `ODataError`, the message naming `param`, the expression
 *   and the 0-based position: "The {param} expression '{text}' is invalid at position {n}: {reason}".
 */
export function odataOption<T>(param: string, text: string | undefined, compile: (text: string) => T, invalid: (message: string) => ApiError): T | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return compile(text);
  } catch (e) {
    if (e instanceof ODataError) throw invalid(`The ${param} expression '${text}' is invalid${e.position !== undefined ? ` at position ${e.position}` : ''}: ${e.message}`);
    throw e;
  }
}

/** An area's input errors and wording. */
export interface InputErrors {
  /** 400 for an invalid member or value; `target` names it (undefined: the body as a whole). */
  invalid: (target: string | undefined, message: string) => ApiError;
  /** 415 for a body that is not JSON. */
  unsupportedMediaType: (contentType: string) => ApiError;
  /** 400 for an invalid tag (default: {@link invalid} with target `tags`). */
  invalidTag?: (tag: string) => ApiError;
  /**
   * How the body is named in its errors: a member name (`'body'`: "The 'body' member is
   * required.", target `body`) or, when absent, "The request body is required." without target.
   */
  bodyMember?: string;
  /** Message for `tags` that is not an object (default: the member wording "The 'tags' member must be a JSON object."). */
  tagsNotObject?: string;
}

/** Validated reading of a JSON body and its members, with an area's {@link InputErrors}. */
export class ArmInput {
  constructor(readonly errors: InputErrors) {}

  /**
   * The JSON object body of a write. A body of another media type (form, XML, text, which
   * the app parses into an object or a buffer) → 415; a missing one → 400 when `required`
   * (else `{}`); not an object → 400; a string or key holding U+0000 anywhere → 400 naming its path.
   */
  body(req: FastifyRequest, required = true): Record<string, unknown> {
    const b = req.body;
    if (b !== undefined && b !== null && !isJsonContent(req)) throw this.errors.unsupportedMediaType(req.headers['content-type'] ?? '');
    const member = this.errors.bodyMember;
    if (b === undefined || b === null) {
      if (required) throw this.errors.invalid(member, member ? `The '${member}' member is required.` : 'The request body is required.');
      return {};
    }
    if (typeof b !== 'object' || Array.isArray(b)) throw this.errors.invalid(member, member ? `The '${member}' member must be a JSON object.` : 'The request body must be a JSON object.');
    const nul = nulPath(b);
    if (nul !== undefined) throw this.errors.invalid(nul, `The value of '${nul}' contains the character U+0000, which is not allowed.`);
    return b as Record<string, unknown>;
  }

  /** An object member (`properties`, `properties.sku`); `{}` when absent and not `required`. */
  member(v: unknown, target: string, required: boolean): Record<string, unknown> {
    if (v === undefined || v === null) {
      if (required) throw this.errors.invalid(target, `The '${target}' member is required.`);
      return {};
    }
    if (typeof v !== 'object' || Array.isArray(v)) throw this.errors.invalid(target, `The '${target}' member must be a JSON object.`);
    return v as Record<string, unknown>;
  }

  /** An optional string member of at most `max` characters. */
  string(o: Record<string, unknown>, key: string, target: string, max = 4000): string | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v.length > max) throw this.errors.invalid(target, `The value of '${target}' must be a string of at most ${max} characters.`);
    return v;
  }

  /** An optional boolean member. */
  bool(o: Record<string, unknown>, key: string, target: string): boolean | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw this.errors.invalid(target, `The value of '${target}' must be true or false.`);
    return v;
  }

  /** An optional ISO 8601 date-time member (with seconds optional and a zone), as UTC ISO text. */
  date(o: Record<string, unknown>, key: string, target: string): string | undefined {
    const s = this.string(o, key, target, 40);
    if (s === undefined) return undefined;
    const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/u.test(s) ? Date.parse(s) : NaN;
    if (Number.isNaN(ms)) throw this.errors.invalid(target, `The value '${s}' of '${target}' is not an ISO 8601 date-time.`);
    return new Date(ms).toISOString();
  }

  /** An optional object of strings (`parameters`): undefined when absent, null when null. */
  stringMap(v: unknown, target: string): Record<string, string> | null | undefined {
    if (v === undefined) return undefined;
    if (v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v)) throw this.errors.invalid(target, `The '${target}' member must be an object of strings.`);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      if (typeof val !== 'string') throw this.errors.invalid(target, `The parameter '${k}' of '${target}' must be a string.`);
      out[k] = val;
    }
    return out;
  }

  /** The `tags` member (spec §2.6): names 1–512 characters, values strings of at most 256; `{}` when absent. */
  tags(v: unknown): Record<string, string> {
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) throw this.errors.invalid('tags', this.errors.tagsNotObject ?? "The 'tags' member must be a JSON object.");
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      if (typeof val !== 'string' || k.length < 1 || k.length > 512 || val.length > 256) {
        throw this.errors.invalidTag ? this.errors.invalidTag(k) : this.errors.invalid('tags', `The tag '${k}' is invalid: names are 1 to 512 characters and values strings of at most 256.`);
      }
      out[k] = val;
    }
    return out;
  }
}
