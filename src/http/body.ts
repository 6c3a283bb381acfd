/**
 * Request bodies: JSON for every family behind one depth guard and a lone-surrogate check
 * (issue 11), forms for the identity provider, anything else as a buffer; and the validators
 * of route schemas (text parts coerce, bodies do not).
 */
import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { surrogatePath, jsonDepthExceeds, maxJsonDepth } from '../core/input.ts';
import { familyOfPath } from '../core/family.ts';
import type { Family } from '../core/errors/index.ts';

/**
 * Request-body limits per family, bytes (issue 30 row 3), as the real services publish them:
 * the mail API refuses requests over 4 MB (larger attachments go through an upload session,
 * whose chunks are at most 4 MB); the resource manager limits a request (a deployment
 * template, the largest body it takes) to 4 MB; the identity provider takes small forms (64 KiB
 * here: client assertions, scopes and codes are a few KiB); the control plane 1 MiB. Families
 * not listed keep the app's limit (150 MiB: the data platform's item definitions, WOPI files).
 * A route may set its own `bodyLimit` (the automation webhook's 512 KB). A body over the limit
 * is refused in the family's envelope (413) from its `Content-Length` before any of it is read,
 * or as soon as a chunked body passes it.
 */
export const familyBodyLimits: Partial<Record<Family, number>> = {
  mail: 4 * 1024 * 1024,
  arm: 4 * 1024 * 1024,
  datashare: 4 * 1024 * 1024,
  oauth: 64 * 1024,
  control: 1024 * 1024,
};

/**
 * Registers the body parsers, the per-family body limits ({@link familyBodyLimits}) and the schema validator compiler.
 * Parse failures become errors with `code` `STRATUS_JSON_TOO_DEEP` / `STRATUS_INVALID_JSON`
 * (status 400), which the app's error handler renders in the family's envelope.
 */
export async function registerBodyParsing(app: FastifyInstance): Promise<void> {
  // Every route declared from here on gets its family's body limit unless it sets one.
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return;
    const family = (route.config as { family?: Family } | undefined)?.family ?? familyOfPath(route.url ?? route.path ?? '/');
    const limit = familyBodyLimits[family];
    if (limit !== undefined) route.bodyLimit = limit;
  });
  // JSON bodies: empty means none; anything else must parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/i, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    // One depth guard for every family, before anything parses or walks the document (issue 11).
    if (jsonDepthExceeds(text, maxJsonDepth)) {
      const err = new Error(`The request body is nested more than ${maxJsonDepth} levels deep.`) as Error & { statusCode: number; code: string };
      err.statusCode = 400;
      err.code = 'STRATUS_JSON_TOO_DEEP';
      return done(err, undefined);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      const err = new Error(`The request content is not valid JSON: ${(e as Error).message}`) as Error & { statusCode: number; code: string };
      err.statusCode = 400;
      err.code = 'STRATUS_INVALID_JSON';
      return done(err, undefined);
    }
    // A lone surrogate (only an escape can make one: decoded UTF-8 never holds one) is text no store keeps as sent.
    if (/\\u[dD][89a-fA-F]/.test(text)) {
      const at = surrogatePath(parsed);
      if (at !== undefined) {
        const err = new Error(`The request content is not valid text: the value at '${at || '(root)'}' contains lone surrogates (invalid UTF-16).`) as Error & { statusCode: number; code: string };
        err.statusCode = 400;
        err.code = 'STRATUS_INVALID_JSON';
        return done(err, undefined);
      }
    }
    done(null, parsed);
  });
  // Query strings and path parameters are text, so their schemas coerce ("5" → 5, one value →
  // [value]); bodies are JSON and are validated as sent: {"displayName": 42} is not a string.
  // `validateSchema: false`: the route schemas are this code's own constants, so they are not
  // checked against the JSON Schema meta-schema at every start (compiling it cost ~60 ms per
  // instance, a tenth of a start); a malformed one still fails to compile, at start.
  const ajvText = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false, validateSchema: false });
  const ajvBody = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false, validateSchema: false });
  addFormats.default(ajvText);
  addFormats.default(ajvBody);
  // Compiled at a route's first request, not at start (~7 ms each; most routes of a run never see a request).
  app.setValidatorCompiler(({ schema, httpPart }) => lazyValidator(httpPart === 'body' ? ajvBody : ajvText, schema as object) as any);
  await app.register(formbody);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

/** A validation function Fastify can call, which compiles `schema` with `ajv` at its first call; its `errors` are those of the last call. */
function lazyValidator(ajv: Ajv, schema: object): ((data: unknown) => boolean) & { errors?: unknown } {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= ajv.compile(schema);
    const ok = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return ok;
  };
  validate.errors = undefined as unknown;
  return validate;
}
