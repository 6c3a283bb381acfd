/**
 * TypeBox schemas of the data platform routes (spec analytics-platform-mail-wopi §2.2, §4.2;
 * reference §2.1, §2.5, §3.2): path parameters, query strings and the shapes of the request
 * bodies. The schemas check types and shapes only; the domain rules (naming rules, the
 * description limit, definition parts and their `CorruptedPayload`, label strategies, item
 * types) stay in `validate.ts`.
 *
 * The routes compile these schemas with TypeBox's own compiler ({@link platformValidator}),
 * not with the app's Ajv: that Ajv coerces types (`coerceTypes: 'array'`), which would turn
 * `{"displayName": 42}` into `"42"`. A failure is an {@link ApiError} `400 InvalidInput` in
 * the shape the service is publicly seen to return for a malformed request (message
 * "The request has an invalid input", one `moreDetails` entry `InvalidParameter` naming the
 * parameter, `isRetriable: false`); the routes attach it (`attachValidation`) and throw it
 * after the caller is authenticated, so a caller without a token gets 401, not 400.
 */
import { isJsonContent } from '../../core/input.ts';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, ValueErrorType, type ValueError } from '@sinclair/typebox/compiler';
import { Errors } from '@sinclair/typebox/errors';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ApiError, errors, invalidInputDetail } from '../../core/errors/index.ts';

/** A uuid in any case (the service accepts upper-case ids). */
export const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const Uuid = Type.String({ pattern: uuidPattern });
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** `{workspaceId}`: a uuid (spec §4.2 "workspaceId (string uuid, required)"). */
export const WorkspaceParams = Type.Object({ workspaceId: Uuid });
/** `{workspaceId}/…/{eventstreamId}`; a malformed item id is an unknown item (404 `ItemNotFound`), so it is only a string here. */
export const ItemParams = Type.Object({ workspaceId: Uuid, eventstreamId: Type.String() });
/** `{operationId}`; a malformed id is an unknown operation (404 `OperationNotFound`). */
export const OperationParams = Type.Object({ operationId: Type.String() });

/** Query of the lists: one `continuationToken`, one `type` (generic `/items` only); other keys are ignored. */
export const ListQuery = Type.Object({ continuationToken: Type.Optional(Type.String()), type: Type.Optional(Type.String()) });
/** Query of getDefinition: one `format`. */
export const GetDefinitionQuery = Type.Object({ format: Type.Optional(Type.String()) });
/** Query of updateDefinition: one `updateMetadata`. */
export const UpdateDefinitionQuery = Type.Object({ updateMetadata: Type.Optional(Type.String()) });
/** Query of delete: one `hardDelete`. */
export const DeleteQuery = Type.Object({ hardDelete: Type.Optional(Type.String()) });

/** `EventstreamDefinitionPart` (spec §2.2): `payloadType` is an extensible enum, checked in code. */
export const DefinitionPart = Type.Object({ path: Type.String(), payload: Type.String(), payloadType: Type.String() });
/** `EventstreamDefinition` (spec §2.2): `format` optional, `parts` a non-empty array. */
export const Definition = Type.Object({ format: Type.Optional(nullable(Type.String())), parts: Type.Array(DefinitionPart, { minItems: 1 }) });
/** The shape of a definition. */
export type DefinitionBody = Static<typeof Definition>;
/** `SensitivityLabelSettings` (spec §2.2): `labelId` a uuid; the strategy is checked in code. */
export const LabelSettings = Type.Object({ labelId: Uuid, sensitivityLabelApplyStrategy: Type.Optional(nullable(Type.String())) });

/**
 * `CreateEventstreamRequest` (spec §2.2). Extra keys are allowed (real clients send
 * `"type": "Eventstream"`); optional fields may be null (observed `"folderId": null`).
 */
export const CreateEventstreamRequest = Type.Object({
  displayName: Type.String(),
  description: Type.Optional(nullable(Type.String())),
  folderId: Type.Optional(nullable(Uuid)),
  type: Type.Optional(nullable(Type.String())),
  definition: Type.Optional(nullable(Definition)),
  sensitivityLabelSettings: Type.Optional(nullable(LabelSettings)),
});
/** The shape of a create body. */
export type CreateEventstreamBody = Static<typeof CreateEventstreamRequest>;

/** `UpdateEventstreamRequest` (reference §2.5): `{displayName?, description?}`. */
export const UpdateEventstreamRequest = Type.Object({ displayName: Type.Optional(nullable(Type.String())), description: Type.Optional(nullable(Type.String())) });
/** The shape of an update body. */
export type UpdateEventstreamBody = Static<typeof UpdateEventstreamRequest>;

/** `UpdateEventstreamDefinitionRequest` (reference §2.5): `{definition}`. */
export const UpdateDefinitionRequest = Type.Object({ definition: Definition });
/** The shape of an updateDefinition body. */
export type UpdateDefinitionBody = Static<typeof UpdateDefinitionRequest>;

/** The platform's 400 for a malformed request (`InvalidInput` with an `InvalidParameter` detail); see the catalogue. */
export const invalidInput = invalidInputDetail;

/** What a schema expects, in words. */
function expected(s: TSchema): string {
  if (Array.isArray(s.anyOf)) return s.anyOf.map((x: TSchema) => expected(x)).join(' or ');
  if (s.pattern === uuidPattern) return 'a uuid';
  if (s.type === 'array') return 'an array';
  if (s.type === 'object') return 'an object';
  if (s.type === 'null') return 'null';
  return `a ${String(s.type)}`;
}

const partNames: Record<string, string> = { params: 'path parameter', querystring: 'query parameter', body: 'property' };

/** A failure of a nullable value that is not null: the failure inside its non-null branch, with the full path. */
function innermost(e: ValueError): ValueError {
  if (e.type !== ValueErrorType.Union || e.value === null || !Array.isArray(e.schema.anyOf)) return e;
  const branches = (e.schema.anyOf as TSchema[]).filter((x) => x.type !== 'null');
  if (branches.length !== 1) return e;
  const inner = Errors(branches[0]!, e.value).First();
  return inner ? innermost({ ...inner, path: `${e.path}${inner.path}` }) : e;
}

/** One sentence for the first failure of a request part. */
function describeFailure(failure: ValueError, httpPart: string): string {
  const e = innermost(failure);
  const name = e.path.replace(/^\//, '');
  const part = partNames[httpPart] ?? 'parameter';
  if (name === '') return httpPart === 'body' ? 'The request body must be a JSON object.' : `The ${part}s are invalid.`;
  if (e.type === ValueErrorType.ObjectRequiredProperty) return `The ${part} '${name}' is required.`;
  if (e.type === ValueErrorType.ArrayMinItems) return `The ${part} '${name}' must not be empty.`;
  return `The ${part} '${name}' must be ${expected(e.schema)}.`;
}

/**
 * The route validator compiler: compiles a TypeBox schema with TypeBox's compiler and turns
 * the first failure into {@link invalidInput} naming the parameter (`The property
 * 'displayName' must be a string.`, `The property 'definition/parts/0/payload' is
 * required.`, `The query parameter 'continuationToken' must be a string.` for a repeated
 * query parameter).
 */
export const platformValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  return (data: unknown) => {
    if (check.Check(data)) return { value: data };
    return { error: invalidInput(describeFailure(check.Errors(data).First()!, httpPart ?? 'body')) };
  };
};

/**
 * Throws the validation failure a route attached (`attachValidation`), once the caller is
 * authenticated. @throws ApiError 400 `InvalidInput`.
 */
export function throwIfInvalid(req: FastifyRequest): void {
  const e = req.validationError as unknown;
  if (e instanceof ApiError) throw e;
  if (e) throw invalidInput((e as Error).message);
}

/**
 * Requires a JSON media type when the request carries a body (the operations consume
 * `application/json`, reference §2.1). @throws ApiError 415 `InvalidInput` (the app's
 * platform code for an unsupported media type).
 */
export function requireJsonContent(req: FastifyRequest): void {
  const type = req.headers['content-type'];
  if (type === undefined || isJsonContent(req)) return;
  throw errors.platform.notJson({ contentType: type }, { isRetriable: false });
}
