/**
 * One catalogue of errors and the envelopes of every API family.
 *
 * Handlers throw {@link ApiError} (usually through a family's helper); the app's error
 * handler renders it in the envelope of the family that owns the route
 * (spec: resource-manager §7, analytics-platform-mail-wopi §7, design "One process").
 */

/** The API families, each with its own error envelope and audience. */
export type Family = 'oauth' | 'arm' | 'datashare' | 'analytics' | 'platform' | 'mail' | 'wopi' | 'control';

/** An ARM / data share `ErrorDetail` (code, message, target, details, additionalInfo). */
export interface ErrorDetail {
  code: string;
  message: string;
  target?: string;
  details?: ErrorDetail[];
  additionalInfo?: { type: string; info: Record<string, unknown> }[];
  /** Platform `moreDetails[].relatedResource`. */
  relatedResource?: { resourceId: string; resourceType: string };
}

/** Options of an {@link ApiError}. */
export interface ApiErrorOptions {
  /** ARM/data share `target`. */
  target?: string;
  /** ARM/data share nested `details`; platform `moreDetails` is rendered from these. */
  details?: ErrorDetail[];
  /** Extra response headers (`Retry-After`, `WWW-Authenticate`, …). */
  headers?: Record<string, string>;
  /** Platform `isRetriable`. */
  isRetriable?: boolean;
  /** Platform `relatedResource`. */
  relatedResource?: { resourceId: string; resourceType: string };
  /** OAuth 2.0 error description (rendered as `error_description`). */
  oauthDescription?: string;
  /** Family that renders this error, overriding the route's family. */
  family?: Family;
}

/**
 * An error with an HTTP status and a stable code, rendered in the envelope of the family
 * that serves the request.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly options: ApiErrorOptions;

  constructor(status: number, code: string, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.options = options;
  }
}

/** Mail error codes the service sends without `innerError` (reference mail §8.1). */
const mailErrorsWithoutInnerError = new Set(['ApplicationThrottled', 'ErrorInvalidUrlQuery', 'ErrorMimeContentInvalidBase64String']);

/** A rendered error: body (or none) and headers. */
export interface RenderedError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** What a renderer knows of the request. */
export interface ErrorRequestInfo {
  requestId: string;
  clientRequestId?: string;
  date: string;
}

function detail(d: ErrorDetail): ErrorDetail {
  const out: ErrorDetail = { code: d.code, message: d.message };
  if (d.target !== undefined) out.target = d.target;
  if (d.details !== undefined) out.details = d.details.map(detail);
  if (d.additionalInfo !== undefined) out.additionalInfo = d.additionalInfo;
  return out;
}

/**
 * Renders `err` in the envelope of `family`.
 * - arm: `{"error":{code,message,target?,details?,additionalInfo?}}` (spec resource-manager §7 ErrorResponse)
 * - datashare: `{"error":{code,message,target?,details?}}` (spec resource-manager §7 DataShareError)
 * - oauth: `{error, error_description, error_codes, timestamp, trace_id, correlation_id}` (RFC 6749 §5.2)
 * - analytics: `{"error":{code,message,"analytics.error":{code,parameters:{},details:[],exceptionCulprit:1}}}` (reference analytics §1.5)
 * - platform: `{errorCode,message,requestId,isRetriable?,moreDetails?,relatedResource?}` (spec analytics §7)
 * - mail: `{"error":{code,message,innerError:{date,request-id,client-request-id}}}`
 * - wopi: no body, the status and headers only (spec analytics §7 bootstrapper)
 * - control: RFC 9457 problem+json
 */
export function renderError(family: Family, err: ApiError, info: ErrorRequestInfo): RenderedError {
  const headers = { ...(err.options.headers ?? {}) };
  const o = err.options;
  switch (family) {
    case 'arm': {
      const e: ErrorDetail = { code: err.code, message: err.message };
      if (o.target !== undefined) e.target = o.target;
      if (o.details !== undefined) e.details = o.details.map(detail);
      return { status: err.status, body: { error: e }, headers };
    }
    case 'datashare': {
      const e: ErrorDetail = { code: err.code, message: err.message };
      if (o.target !== undefined) e.target = o.target;
      if (o.details !== undefined) e.details = o.details.map((d) => ({ code: d.code, message: d.message, ...(d.target ? { target: d.target } : {}) }));
      return { status: err.status, body: { error: e }, headers };
    }
    case 'oauth':
      return {
        status: err.status,
        body: {
          error: err.code,
          error_description: o.oauthDescription ?? err.message,
          error_codes: [],
          timestamp: info.date,
          trace_id: info.requestId,
          correlation_id: info.clientRequestId ?? info.requestId,
        },
        headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...headers },
      };
    case 'analytics':
      // The observed body (reference §1.5): the code twice, the second time in `analytics.error`.
      return {
        status: err.status,
        body: { error: { code: err.code, message: err.message, 'analytics.error': { code: err.code, parameters: {}, details: [], exceptionCulprit: 1 } } },
        headers: { RequestId: info.requestId, ...headers },
      };
    case 'platform': {
      // Key order as observed (reference §4.1): requestId, errorCode, [moreDetails], message, [relatedResource], [isRetriable].
      const body: Record<string, unknown> = { requestId: info.requestId, errorCode: err.code };
      if (o.details !== undefined) {
        body.moreDetails = o.details.map((d) => ({
          ...(d.code ? { errorCode: d.code } : {}),
          ...(d.message ? { message: d.message } : {}),
          ...(d.relatedResource ? { relatedResource: d.relatedResource } : {}),
        }));
      }
      body.message = err.message;
      if (o.relatedResource !== undefined) body.relatedResource = o.relatedResource;
      if (o.isRetriable !== undefined) body.isRetriable = o.isRetriable;
      return { status: err.status, body, headers: { RequestId: info.requestId, 'x-vendor-public-api-error-code': err.code, ...headers } };
    }
    case 'mail':
      return {
        status: err.status,
        body: {
          error: {
            code: err.code,
            message: err.message,
            // Some mail-service errors come without innerError (reference mail §8.1).
            ...(mailErrorsWithoutInnerError.has(err.code)
              ? {}
              : { innerError: { date: info.date.replace(/\.\d{3}Z$/, ''), 'request-id': info.requestId, 'client-request-id': info.clientRequestId ?? info.requestId } }),
          },
        },
        headers: { 'request-id': info.requestId, 'client-request-id': info.clientRequestId ?? info.requestId, ...headers },
      };
    case 'wopi':
      return { status: err.status, body: undefined, headers };
    case 'control':
    default:
      return {
        status: err.status,
        body: { type: 'about:blank', title: err.code, status: err.status, detail: err.message },
        headers: { 'content-type': 'application/problem+json', ...headers },
      };
  }
}
