/**
 * Validation of eventstream requests (spec analytics-platform-mail-wopi §2.2, §8; reference
 * §2.1, §2.4, §5): the item naming rules, the description limit, the definition parts (valid
 * base64 whose JSON content fits the part) and the sensitivity label settings. Every
 * failure is an {@link ApiError} in the platform envelope.
 */
import { errors, type ApiError } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { invalidInput, type CreateEventstreamBody, type DefinitionBody, type UpdateEventstreamBody } from './schemas.ts';

/** Longest display name (reference §2.4: the vendor's provider validates ≤ 123 for eventstreams). */
export const maxDisplayNameLength = 123;
/** Longest description (spec §8). */
export const maxDescriptionLength = 256;
/** Characters a display name must not contain (Stratus's rule; the contract is silent). */
export const forbiddenNameChars = /[\\/:*?"<>|#%\u0000-\u001f\u007f]/;

/** The three part paths of an eventstream definition (spec §2.2), in getDefinition order. */
export const partPaths = ['eventstream.json', 'eventstreamProperties.json', '.platform'] as const;

/** A validated create request. */
export interface CreateRequest {
  displayName: string;
  description?: string;
  folderId?: string;
  definition?: { format?: string; parts: { path: (typeof partPaths)[number]; payload: string; payloadType: 'InlineBase64'; json: any }[] };
  sensitivityLabelSettings?: { labelId: string; sensitivityLabelApplyStrategy: 'ApplyOrFail' | 'Ignore' };
}

/** A lone UTF-16 surrogate: text that is not well-formed Unicode (it would not survive UTF-8 storage). */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks a display name against the naming rules: a string of 1–123 characters, not blank,
 * without leading or trailing white space, control characters, lone surrogates or any of
 * `\ / : * ? " < > | # %`.
 * @throws ApiError 400 `InvalidInput` (with a `moreDetails` entry `InvalidParameter` giving the rule).
 */
export function checkDisplayName(v: unknown): string {
  const fail = (why: string) => invalidInput(`The property 'displayName' is invalid: ${why}`);
  if (typeof v !== 'string') throw fail('it is required and must be a string.');
  if (v.trim() === '') throw fail('it must not be empty or blank.');
  if ([...v].length > maxDisplayNameLength) throw fail(`it must be at most ${maxDisplayNameLength} characters.`);
  if (v !== v.trim()) throw fail('it must not start or end with white space.');
  if (forbiddenNameChars.test(v) || loneSurrogate.test(v)) throw fail('it must not contain control characters, lone surrogates or any of \\ / : * ? " < > | # %.');
  return v;
}

/**
 * Checks a description: a string of at most 256 characters (spec §8), without NUL characters
 * or lone surrogates (neither store keeps them); null/absent allowed.
 * @throws ApiError 400 `InvalidInput` (with a `moreDetails` entry `InvalidParameter`).
 */
export function checkDescription(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidInput("The property 'description' must be a string.");
  const length = [...v].length;
  if (length > maxDescriptionLength) throw invalidInput(`The property 'description' is too long: maximum length is ${maxDescriptionLength} characters (got ${length}).`);
  if (v.includes('\u0000') || loneSurrogate.test(v)) throw invalidInput("The property 'description' must not contain NUL characters or lone surrogates.");
  return v;
}

function corrupted(message: string, path?: string): ApiError {
  const code = errors.platform.entries.corruptedPayload.code;
  return errors.platform.corruptedPayload({ message }, { isRetriable: false, ...(path ? { details: [{ code, message: `Part '${path}': ${message}` }] } : {}) });
}

const base64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes a strict standard base64 payload to UTF-8 JSON. @throws ApiError 400 `CorruptedPayload`. */
export function decodePayload(path: string, payload: string): any {
  const compact = payload.replace(/\s+/g, '');
  if (compact === '' || !base64Re.test(compact)) throw corrupted(`The payload of part '${path}' is not valid base64.`, path);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    throw corrupted(`The payload of part '${path}' is not UTF-8 text.`, path);
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw corrupted(`The payload of part '${path}' is not valid JSON.`, path);
  }
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks `eventstream.json` (reference §5): the topology arrays, node names and types, input references. */
export function checkTopology(j: any): void {
  const p = 'eventstream.json';
  if (!isObject(j)) throw corrupted('The eventstream topology must be a JSON object.', p);
  const names = new Set<string>();
  const refs: string[] = [];
  for (const key of ['sources', 'destinations', 'operators', 'streams']) {
    const list = j[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw corrupted(`'${key}' must be an array.`, p);
    for (const [i, n] of list.entries()) {
      if (!isObject(n)) throw corrupted(`${key}[${i}] must be an object.`, p);
      if (typeof n.name !== 'string' || n.name.trim() === '') throw corrupted(`${key}[${i}].name must be a non-empty string.`, p);
      if (typeof n.type !== 'string' || n.type.trim() === '') throw corrupted(`${key}[${i}].type must be a non-empty string.`, p);
      if (n.id !== undefined && n.id !== null && (typeof n.id !== 'string' || !isUuid(n.id))) throw corrupted(`${key}[${i}].id must be a uuid.`, p);
      if (n.properties !== undefined && n.properties !== null && !isObject(n.properties)) throw corrupted(`${key}[${i}].properties must be an object.`, p);
      if (names.has(n.name)) throw corrupted(`The node name '${n.name}' is used twice.`, p);
      names.add(n.name);
      if (n.inputNodes !== undefined && n.inputNodes !== null) {
        if (!Array.isArray(n.inputNodes)) throw corrupted(`${key}[${i}].inputNodes must be an array.`, p);
        for (const r of n.inputNodes) {
          if (!isObject(r) || typeof r.name !== 'string') throw corrupted(`${key}[${i}].inputNodes entries must be objects with a name.`, p);
          refs.push(r.name);
        }
      }
    }
  }
  for (const r of refs) if (!names.has(r)) throw corrupted(`The input node '${r}' does not name a node of the topology.`, p);
  if (j.compatibilityLevel !== undefined && j.compatibilityLevel !== null && typeof j.compatibilityLevel !== 'string') throw corrupted("'compatibilityLevel' must be a string.", p);
}

/** Checks `eventstreamProperties.json` (reference §5): retention 1–90 days, throughput Low/Medium/High. */
export function checkProperties(j: any): void {
  const p = 'eventstreamProperties.json';
  if (!isObject(j)) throw corrupted('The eventstream properties must be a JSON object.', p);
  const r = j.retentionTimeInDays;
  if (r !== undefined && r !== null && !(Number.isInteger(r) && r >= 1 && r <= 90)) throw corrupted("'retentionTimeInDays' must be an integer from 1 to 90.", p);
  const t = j.eventThroughputLevel;
  if (t !== undefined && t !== null && !['Low', 'Medium', 'High'].includes(t)) throw corrupted("'eventThroughputLevel' must be Low, Medium or High.", p);
}

/** Checks `.platform` (reference §5): metadata type Eventstream, string names, a uuid logical id. */
export function checkPlatformFile(j: any): void {
  const p = '.platform';
  if (!isObject(j)) throw corrupted('The platform file must be a JSON object.', p);
  if (j.metadata !== undefined) {
    if (!isObject(j.metadata)) throw corrupted("'metadata' must be an object.", p);
    if (j.metadata.type !== undefined && j.metadata.type !== 'Eventstream') throw corrupted("'metadata.type' must be 'Eventstream'.", p);
    if (j.metadata.displayName !== undefined && typeof j.metadata.displayName !== 'string') throw corrupted("'metadata.displayName' must be a string.", p);
    if (j.metadata.description !== undefined && j.metadata.description !== null && typeof j.metadata.description !== 'string') throw corrupted("'metadata.description' must be a string.", p);
  }
  if (j.config !== undefined) {
    if (!isObject(j.config)) throw corrupted("'config' must be an object.", p);
    if (j.config.logicalId !== undefined && (typeof j.config.logicalId !== 'string' || !isUuid(j.config.logicalId))) throw corrupted("'config.logicalId' must be a uuid.", p);
  }
}

/**
 * Validates the content of an `EventstreamDefinition` whose shape the route schema checked
 * (spec §2.2, reference §5): known, distinct part paths (case-insensitive), `eventstream.json`
 * present, `payloadType` `InlineBase64`, each payload valid base64 of JSON that fits its part;
 * `format` absent, null, `eventstream` or `Default`.
 * @throws ApiError 400 `InvalidInput` for an unsupported format or payload type,
 * `CorruptedPayload` for a part's path or content.
 */
export function checkDefinition(d: DefinitionBody): NonNullable<CreateRequest['definition']> {
  if (d.format !== undefined && d.format !== null && !['eventstream', 'default'].includes(d.format.toLowerCase())) {
    throw invalidInput(`The definition format '${d.format}' is not supported; use 'eventstream' or omit it.`);
  }
  const out: NonNullable<CreateRequest['definition']>['parts'] = [];
  for (const [i, part] of d.parts.entries()) {
    const path = partPaths.find((p) => p.toLowerCase() === part.path.toLowerCase());
    if (!path) throw corrupted(`The part path '${part.path}' is not a part of an eventstream definition (${partPaths.join(', ')}).`, part.path);
    if (out.some((o) => o.path === path)) throw corrupted(`The part '${path}' is given twice.`, path);
    if (part.payloadType !== 'InlineBase64') throw invalidInput(`The property 'definition/parts/${i}/payloadType' must be 'InlineBase64' (the only supported payload type).`);
    const json = decodePayload(path, part.payload);
    if (path === 'eventstream.json') checkTopology(json);
    else if (path === 'eventstreamProperties.json') checkProperties(json);
    else checkPlatformFile(json);
    out.push({ path, payload: part.payload.replace(/\s+/g, ''), payloadType: 'InlineBase64', json });
  }
  if (!out.some((p) => p.path === 'eventstream.json')) throw corrupted("The definition has no 'eventstream.json' part.", 'eventstream.json');
  return { format: d.format ?? undefined, parts: out };
}

/**
 * Applies the domain rules to a `CreateEventstreamRequest` whose shape the route schema
 * checked (spec §2.2): the naming rules, the description limit, the definition content,
 * the label strategy. Extra keys (`type`, observed in real requests) are accepted; `type`,
 * when given, must be `Eventstream`.
 * @throws ApiError 400 `InvalidInput` / `CorruptedPayload` / `InvalidItemType`.
 */
export function checkCreateRequest(body: CreateEventstreamBody): CreateRequest {
  if (body.type !== undefined && body.type !== null && body.type !== 'Eventstream') throw errors.platform.itemTypeNotHere({ type: String(body.type) }, { isRetriable: false });
  const out: CreateRequest = { displayName: checkDisplayName(body.displayName) };
  const description = checkDescription(body.description);
  if (description !== undefined) out.description = description;
  if (body.folderId !== undefined && body.folderId !== null) out.folderId = body.folderId.toLowerCase();
  if (body.definition !== undefined && body.definition !== null) out.definition = checkDefinition(body.definition);
  const s = body.sensitivityLabelSettings;
  if (s !== undefined && s !== null) {
    const strategy = s.sensitivityLabelApplyStrategy ?? 'ApplyOrFail';
    if (strategy !== 'ApplyOrFail' && strategy !== 'Ignore') throw invalidInput("The property 'sensitivityLabelSettings/sensitivityLabelApplyStrategy' must be 'ApplyOrFail' or 'Ignore'.");
    out.sensitivityLabelSettings = { labelId: s.labelId.toLowerCase(), sensitivityLabelApplyStrategy: strategy };
  }
  return out;
}

/**
 * Applies the domain rules to an update request `{displayName?, description?}` whose shape
 * the route schema checked (reference §2.5).
 * @throws ApiError 400 `InvalidRequest` when it changes nothing; `InvalidInput` for a bad value.
 */
export function checkUpdateRequest(body: UpdateEventstreamBody): { displayName?: string; description?: string } {
  const out: { displayName?: string; description?: string } = {};
  if (body.displayName !== undefined && body.displayName !== null) out.displayName = checkDisplayName(body.displayName);
  if (body.description !== undefined && body.description !== null) out.description = checkDescription(body.description) ?? '';
  if (out.displayName === undefined && out.description === undefined) throw errors.platform.invalidUpdate({}, { isRetriable: false });
  return out;
}

/** Base64 of UTF-8 text. */
export function toBase64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The default `eventstream.json` of an eventstream created without a definition (reference §5, observed: CRLF, 2-space indent). */
export function defaultTopologyPayload(): string {
  return toBase64(JSON.stringify({ sources: [], destinations: [], streams: [], operators: [], compatibilityLevel: '1.1' }, null, 2).replace(/\n/g, '\r\n'));
}

/** The default `eventstreamProperties.json` (reference §5, observed). */
export function defaultPropertiesPayload(): string {
  return toBase64(JSON.stringify({ retentionTimeInDays: 1, eventThroughputLevel: 'Low' }, null, 2).replace(/\n/g, '\r\n'));
}

/** The `.platform` file of an item (reference §5: LF, 2-space indent), with its current name and description. */
export function platformFilePayload(schemaBase: string, item: { displayName: string; description?: string | null }, logicalId: string): string {
  const metadata: Record<string, string> = { type: 'Eventstream', displayName: item.displayName };
  if (item.description) metadata.description = item.description;
  return toBase64(JSON.stringify({ $schema: `${schemaBase}/gitIntegration/platformProperties/2.0.0/schema.json`, metadata, config: { version: '2.0', logicalId } }, null, 2));
}
