/**
 * How every answer leaves: the family's request-id headers on every response and `Date`
 * (Node's own, design "Conventions"), the per-request line at `debug`, the error handler that renders
 * whatever a route throws in the family's envelope (never a stack trace, never a 500 for bad
 * input), and the not-found answer of each family.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ApiError, errors, invalidInputDetail, withStatus, type Family } from '../core/errors/index.ts';
import { familyOf, familyOfPath } from '../core/family.ts';
import { knownMethods } from './raw.ts';
import { sendError } from './respond.ts';
import { headerRecord, redactQuery } from '../core/request-log-text.ts';

/**
 * Registers the response-header hook and, when `log` is at `debug`, the per-request debug line
 * (its query and headers redacted by the request log's routine, with `controlKey` replaced).
 */
export function registerResponseHeaders(app: FastifyInstance, log: FastifyBaseLogger, controlKey = ''): void {
  // Callback style: no promise per request.
  app.addHook('onSend', (req, reply, payload, done) => {
    const family = familyOf(req);
    if (family === 'arm' || family === 'datashare') {
      const corr = req.headers['x-vendor-correlation-request-id'];
      reply.header('x-vendor-request-id', req.id);
      reply.header('x-vendor-correlation-request-id', typeof corr === 'string' && corr ? corr : req.id);
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Cache-Control', reply.getHeader('Cache-Control') ?? 'no-cache');
    } else if (family === 'platform' || family === 'analytics') {
      reply.header('RequestId', req.id);
    } else if (family === 'mail') {
      const client = req.headers['client-request-id'];
      reply.header('request-id', req.id);
      reply.header('client-request-id', typeof client === 'string' && client ? client : req.id);
    }
    // `Date` is Node's own (every HTTP/1.1 answer, made once a second, never validated again).
    done(null, payload);
  });

  // One line per request at `debug` (method, path, status, ms, request id, query and headers);
  // nothing per request at `info` and above: measured, the line cost about 40 % of the
  // throughput of the lightest routes (bench/README.md). The console and `stratus requests`
  // show every request instead.
  if ((log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled('debug')) {
    app.addHook('onResponse', (req, reply, done) => {
      const url = req.raw.url ?? req.url;
      const q = url.indexOf('?');
      log.debug(
        {
          reqId: req.id,
          method: req.method,
          path: q < 0 ? url : url.slice(0, q),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
          // The request log's redaction (issue 30 row 7): secret-named query values (`key=`,
          // `client_secret=`, codes, tokens), `Authorization`, `Cookie`, the control key anywhere.
          query: q < 0 ? undefined : redactQuery(url.slice(q + 1), controlKey),
          headers: headerRecord(req.headers, controlKey),
        },
        'request',
      );
      done();
    });
  }
}

/** Registers the error handler (`log` gets the unexpected errors). */
export function registerErrorHandler(app: FastifyInstance, log: FastifyBaseLogger): void {
  app.setErrorHandler(async (error: any, req, reply) => {
    const family: Family = error instanceof ApiError && error.options.family ? error.options.family : familyOf(req);
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error.code === 'STRATUS_JSON_TOO_DEEP') {
      apiError = family === 'platform' ? invalidInputDetail(error.message) : errors[family].bodyTooDeep({ message: error.message });
    } else if (error.code === '22021' || error.code === '22P05') {
      // Last line behind the input guards: text PostgreSQL cannot store (NUL, bad encoding) is the caller's 400, not a 500.
      apiError = errors[family].unstorableText();
    } else if (error.validation || error.code === 'STRATUS_INVALID_JSON' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      const text = error.validation ? `The ${error.validationContext ?? 'request'} is invalid: ${error.message}` : error.message;
      apiError =
        family === 'platform'
          ? // The platform's malformed-input shape (reference §4.1; live bodies): InvalidInput with one InvalidParameter detail.
            invalidInputDetail(text)
          : errors[family].invalidBody({ message: text });
    } else if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      apiError = errors[family].unsupportedMediaType({ contentType: req.headers['content-type'] ?? '' });
    } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.code === 'SQLITE_TOOBIG' || error.code === '54000') {
      // Last line behind the body limits (issue 30 row 3): a value the database cannot hold or sort
      // ("string or blob too big", PostgreSQL's program_limit_exceeded) is the caller's 413, not a 500.
      apiError = errors[family].bodyTooLarge();
    } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      apiError = withStatus(errors[family].requestRejected({ message: error.message }), error.statusCode);
    } else {
      log.error({ err: error, reqId: req.id }, 'unhandled error');
      apiError = errors[family].internalError();
    }
    return sendError(family, apiError, req, reply);
  });
}

/** Registers the not-found answer of each family (405 for a method no route answers). */
export function registerNotFound(app: FastifyInstance): void {
  app.setNotFoundHandler(async (req, reply) => {
    const family = familyOfPath(req.url.split('?')[0]!);
    if (!knownMethods.has(req.method)) return sendError(family, errors[family].methodNotAllowed({ method: req.method }, { headers: { allow: [...knownMethods].join(', ') } }), req, reply);
    const pathOnly = req.url.split('?')[0];
    const message =
      family === 'arm' || family === 'datashare'
        ? `The resource path '${pathOnly}' with method '${req.method}' was not found.`
        : family === 'mail'
          ? `Resource not found for the segment '${pathOnly!.split('/').filter(Boolean).pop() ?? ''}'.`
          : `No route matches ${req.method} ${pathOnly}.`;
    // Each family's catalogue says the status (mail answers an unknown segment 400).
    return sendError(family, errors[family].routeNotFound({ message }), req, reply);
  });
}
