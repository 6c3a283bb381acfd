/**
 * Reading world files (issue 28 item 1): YAML or JSON (JSON is read as YAML 1.2, so both give
 * positions), validated against `schemas/world.schema.json` (Ajv, from `schema.ts`), merged in
 * the order given. Every error names the file, the line and column, and the path in the document
 * (`worlds/team.yaml:12:9: /tenants/0/users/1: must have required property 'password'`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ConfigError } from '../config.ts';
import { jsonLocator } from './json-position.ts';
import { WorldFile, worldKindsNotYetCovered, type WorldFileData, type WorldTenantData } from './schema.ts';

/** A world file that does not read, validate or resolve; `problems` holds one line each (file:line:col: path: message). */
export class WorldError extends ConfigError {
  constructor(readonly problems: string[]) {
    super(`invalid world:\n  ${problems.join('\n  ')}`);
  }
}

/** One parsed file and where its nodes are. */
export interface ParsedWorldFile {
  file: string;
  data: WorldFileData;
  /** `file:line:col` of a JSON-pointer-like path (`/tenants/0/users/1`), or of the file when the path is not found. */
  at(pointer: string): string;
}

/** A world read from one or more files: the merged data and where each tenant-level item came from. */
export interface World {
  clock?: string;
  tenants: (WorldTenantData & { from: ParsedWorldFile; index: number })[];
  /** SHA-256 of the files' contents in order: a store loaded from the same files is not loaded again. */
  hash: string;
  files: string[];
}

let validator: ValidateFunction | undefined;
function validate(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    validator = ajv.compile(WorldFile);
  }
  return validator;
}

/** The position finder of a parsed document. */
function locator(file: string, doc: Document, lines: LineCounter): (pointer: string) => string {
  return (pointer: string) => {
    const parts = pointer.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
    for (let n = parts.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : (doc.getIn(parts.slice(0, n), true) as { range?: [number, number, number] } | undefined);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) {
        const { line, col } = lines.linePos(range[0]);
        return `${file}:${line}:${col}`;
      }
    }
    return `${file}:1:1`;
  };
}

/** `JSON.parse` of a JSON document, or undefined when it does not parse (the YAML reader then reads it and reports where). A duplicate key keeps its last value, as `JSON.parse` does. */
function jsonData(source: string): { data: unknown } | undefined {
  try {
    return { data: JSON.parse(source) as unknown };
  } catch {
    return undefined;
  }
}

/** One Ajv error as a line. */
function describe(e: ErrorObject, at: (p: string) => string): string {
  if (e.keyword === 'additionalProperties') {
    const field = (e.params as { additionalProperty: string }).additionalProperty;
    const p = `${e.instancePath}/${field}`;
    const later = worldKindsNotYetCovered.includes(field) ? ' (not covered by this version of the world format yet; see docs/worlds.md)' : '';
    return `${at(p)}: ${p}: unknown field '${field}'${later}`;
  }
  return `${at(e.instancePath)}: ${e.instancePath || '/'}: ${e.message}${e.keyword === 'enum' || e.keyword === 'const' ? ` ${JSON.stringify(e.params)}` : ''}`;
}

/**
 * Reads and validates one world file. `trusted` skips the schema validation: for the world files
 * Stratus ships (the demo world, loaded at every fresh start), which `test/world.test.ts` validates;
 * compiling the schema's validator was a fifth of a fresh start's CPU (about 350 ms, issue 31).
 * @throws WorldError naming the file, line, column and path of each problem (at most 20).
 */
export function parseWorldFile(file: string, text?: string, trusted = false): ParsedWorldFile {
  let source: string;
  try {
    source = text ?? fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new WorldError([`${file}: cannot be read: ${(e as Error).message}`]);
  }
  // A JSON document (an export, a large generated world) is read with JSON.parse, many times
  // faster than the YAML reader; positions are found by scanning the text when a message needs one.
  const json = /^\s*\{/.test(source) ? jsonData(source) : undefined;
  let data: unknown;
  let at: (pointer: string) => string;
  if (json !== undefined) {
    data = json.data;
    at = jsonLocator(file, source);
  } else {
    const lines = new LineCounter();
    const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length) {
      throw new WorldError(doc.errors.slice(0, 20).map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return `${file}:${line}:${col}: ${e.message.split('\n')[0]}`;
      }));
    }
    at = locator(file, doc, lines);
    data = doc.toJS({ maxAliasCount: 1000 }) as unknown;
  }
  if (data === null || data === undefined) return { file, data: {}, at };
  if (trusted) return { file, data: data as WorldFileData, at };
  const check = validate();
  if (!check(data)) {
    // An unknown field also fails the unions around it: report the precise lines first.
    const errs = [...(check.errors ?? [])].sort((a, b) => Number(b.keyword === 'additionalProperties') - Number(a.keyword === 'additionalProperties'));
    const seen = new Set<string>();
    const out: string[] = [];
    for (const e of errs) {
      const line = describe(e, at);
      if (!seen.has(line)) out.push(line);
      seen.add(line);
    }
    throw new WorldError(out.slice(0, 20));
  }
  return { file, data: data as WorldFileData, at };
}

/**
 * Reads the world files `files` in order and merges them: tenants are concatenated (a tenant
 * named by the same domain in several files is merged: its lists concatenated); the clock may be
 * set by one file or by several to the same time. `trusted`: files Stratus ships, not validated
 * against the schema again ({@link parseWorldFile}).
 * @throws WorldError for any file's problems, or clocks that differ.
 */
export function readWorld(files: readonly string[], texts?: readonly string[], trusted = false): World {
  const problems: string[] = [];
  const parsed: ParsedWorldFile[] = [];
  const hash = createHash('sha256');
  files.forEach((f, i) => {
    const file = texts ? f : path.resolve(f);
    try {
      const p = parseWorldFile(texts ? f : path.relative(process.cwd(), file) || file, texts?.[i] ?? fs.readFileSync(file, 'utf8'), trusted);
      parsed.push(p);
      hash.update(JSON.stringify(p.data)).update('\0');
    } catch (e) {
      if (e instanceof WorldError) problems.push(...e.problems);
      else problems.push(`${f}: cannot be read: ${(e as Error).message}`);
    }
  });
  if (problems.length) throw new WorldError(problems);
  let clock: string | undefined;
  let clockFrom = '';
  const tenants: World['tenants'] = [];
  for (const p of parsed) {
    if (p.data.clock !== undefined) {
      if (clock !== undefined && Date.parse(clock) !== Date.parse(p.data.clock)) problems.push(`${p.at('/clock')}: /clock: ${p.data.clock} differs from ${clock} set by ${clockFrom}`);
      clock = p.data.clock;
      clockFrom = p.at('/clock');
    }
    (p.data.tenants ?? []).forEach((t, index) => tenants.push({ ...t, from: p, index }));
  }
  if (problems.length) throw new WorldError(problems);
  return { clock, tenants, hash: hash.digest('hex'), files: parsed.map((p) => p.file) };
}
