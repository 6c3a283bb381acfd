/**
 * Input of the resources area: the JSON body reader, path parameters, `$top`, `$skiptoken`
 * and the filter error, all raised from the `arm` catalogue (`InvalidParameter`,
 * `UnsupportedMediaType`, `InvalidFilter`).
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../../core/errors/index.ts';
import { ArmInput, skipToken } from '../arm/input.ts';

/** 400 `InvalidParameter` naming `target`. */
export const bad = (target: string | undefined, message: string) => errors.arm.invalidParameter({ message }, target ? { target } : {});

/** The area's body reader. */
export const input = new ArmInput({ invalid: bad, unsupportedMediaType: (contentType) => errors.arm.bodyNotJson({ contentType }) });

/** The path parameters of a request. */
export function params(req: FastifyRequest): Record<string, string | undefined> {
  return req.params as Record<string, string | undefined>;
}

/** 400 `InvalidFilter` for a `$filter` of an unsupported form. */
export function invalidFilter(text: string) {
  return errors.arm.invalidFilter({ message: `The $filter '${text}' is not supported.` }, { target: '$filter' });
}

/** `$top` (1–1000; default 1000): the page size of a list. @throws 400 naming `$top` */
export function pageSizeOf(req: FastifyRequest): number {
  const v = (req.query as Record<string, unknown>)['$top'];
  if (v === undefined || v === '') return 1000;
  const n = typeof v === 'string' && /^\d{1,4}$/u.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= 1000)) throw bad('$top', `The value '${String(v)}' of '$top' must be an integer from 1 to 1000.`);
  return n;
}

/** The keyset position (`a`, a lower-case key) of `$skiptoken` / `$skipToken`, undefined when absent. @throws 400 for one that does not decode */
export function skipTokenOf(req: FastifyRequest): string | undefined {
  return skipToken<{ a: string }>(req, ['$skiptoken', '$skipToken'], (t) => typeof t.a === 'string', (token) => bad('$skiptoken', `The value '${token}' of '$skiptoken' is not valid.`))?.a;
}
