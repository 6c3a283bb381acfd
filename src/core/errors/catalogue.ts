/**
 * The error catalogue's machinery: each family declares its errors once (code, HTTP status,
 * message template with named `{parameters}`, headers) with {@link defineErrors}, and
 * handlers raise them by name — `errors.arm.resourceNotFound({ type, name })` — instead of
 * building {@link ApiError}s inline. Every declared entry is also registered, so the
 * documentation's error tables are generated from the same declarations
 * (`scripts/gen-error-docs.ts` → `docs/errors.md`) and cannot drift.
 *
 * Source: design "Errors come from the catalogue"; the envelopes are in `envelope.ts`.
 */
import { ApiError, type ApiErrorOptions, type Family } from './envelope.ts';

/** One declared error. */
export interface ErrorEntry {
  /** HTTP status code. */
  status: number;
  /** The family's error code (`ResourceNotFound`, `ErrorItemNotFound`, `invalid_grant`, …). */
  code: string;
  /**
   * Message template; `{name}` is replaced by the parameter `name` (a missing parameter is
   * left as written). A template of just `{message}` takes a message computed by the rules.
   */
  message: string;
  /** Headers every occurrence carries (`Retry-After`, `WWW-Authenticate`, …). */
  headers?: Record<string, string>;
  /** When the error is raised, for the documentation (one sentence). */
  when?: string;
}

/** The `{name}` parameters of a message template, as a union of names. */
export type TemplateParams<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | TemplateParams<Rest> : never;

/** Parameters of a raise function: an object with each template parameter. */
export type ParamsOf<T extends string> = { [K in TemplateParams<T>]: string | number };

/**
 * A raise function: builds the {@link ApiError} of one entry. Templates without
 * parameters take none; `options` carries what varies per occurrence (`target`, `details`,
 * extra `headers`, platform `relatedResource`, …).
 */
export type Raise<T extends string> = [TemplateParams<T>] extends [never]
  ? (params?: Record<string, never>, options?: ApiErrorOptions) => ApiError
  : (params: ParamsOf<T>, options?: ApiErrorOptions) => ApiError;

/** A family's catalogue: one raise function per entry, plus the entries themselves. */
export type Catalogue<T extends Record<string, ErrorEntry>> = { readonly [K in keyof T]: Raise<T[K]['message']> } & {
  /** The declared entries, by name (for documentation and tests). */
  readonly entries: Readonly<T>;
  /** The family whose envelope renders these errors. */
  readonly family: Family;
};

/** Every declared catalogue, by family, in declaration order. */
export const registry = new Map<Family, Record<string, ErrorEntry>>();

/**
 * Fills a message template: `{name}` → `String(params.name)`.
 * @param template the entry's message.
 * @param params values by name; names not given stay as written.
 */
export function fillTemplate(template: string, params: Record<string, unknown> | undefined): string {
  if (!params || !template.includes('{')) return template;
  return template.replace(/\{([A-Za-z][A-Za-z0-9_]*)\}/g, (all, name: string) => (name in params ? String(params[name]) : all));
}

/**
 * Declares a family's errors.
 * @param family the family whose envelope renders them (also the docs section).
 * @param entries by raise-function name.
 * @returns the catalogue; `catalogue.name(params, options)` returns (does not throw) the error.
 * @throws Error when a name is declared twice for the family (a programming error, at start-up).
 */
export function defineErrors<const T extends Record<string, ErrorEntry>>(family: Family, entries: T): Catalogue<T> {
  const known = registry.get(family) ?? {};
  const out: Record<string, unknown> = { entries, family };
  for (const [name, entry] of Object.entries(entries)) {
    if (name in known) throw new Error(`error catalogue: ${family}.${name} declared twice`);
    known[name] = entry;
    out[name] = (params?: Record<string, unknown>, options: ApiErrorOptions = {}) =>
      new ApiError(entry.status, entry.code, fillTemplate(entry.message, params), entry.headers ? { ...options, headers: { ...entry.headers, ...options.headers } } : options);
  }
  registry.set(family, known);
  return out as Catalogue<T>;
}
