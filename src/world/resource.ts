/**
 * Resource-manager resources in a world file (the data kinds nested in a resource group):
 * the resource's own fields — `name`, `location`, `tags`, `identity`, `systemData`,
 * `properties` — and the body written to `arm_resources` (`id`, `name`, `type`, then those),
 * with `systemData` made from the world's time when omitted.
 */
import { Type } from '@sinclair/typebox';

/** A free-form JSON object (a resource's `properties`, `identity`, `systemData`). */
export const jsonObject = Type.Record(Type.String(), Type.Unknown());

/** The fields of a resource as the file gives them (children are each kind's own). */
export const resourceFields = {
  name: Type.String({ minLength: 1, maxLength: 260, pattern: '^[^/?#]+$' }),
  tags: Type.Optional(Type.Record(Type.String({ maxLength: 512 }), Type.String({ maxLength: 256 }))),
  systemData: Type.Optional(jsonObject),
  properties: Type.Optional(jsonObject),
};

/** A resource of the file (see {@link resourceFields}). */
export interface FileResource {
  name: string;
  location?: string;
  tags?: Record<string, string>;
  identity?: Record<string, unknown>;
  systemData?: Record<string, unknown>;
  properties?: Record<string, unknown>;
}

/** The `systemData` of a resource made by the world at `at` (ISO). */
export function worldSystemData(at: string): Record<string, unknown> {
  return { createdBy: 'stratus-world', createdByType: 'Application', createdAt: at, lastModifiedBy: 'stratus-world', lastModifiedByType: 'Application', lastModifiedAt: at };
}

/**
 * The stored body of resource `r`: id, name, type, location and tags (when `tracked`),
 * identity (when given), systemData (given or made at `at`), properties (the defaults, then the
 * file's).
 */
export function resourceBody(id: string, type: string, r: FileResource, at: string, o: { tracked: boolean; location?: string; identity?: Record<string, unknown>; defaults?: Record<string, unknown> }): Record<string, unknown> {
  return {
    id,
    name: r.name,
    type,
    ...(o.tracked ? { location: r.location ?? o.location, tags: r.tags ?? {} } : {}),
    ...(r.identity ?? o.identity ? { identity: r.identity ?? o.identity } : {}),
    systemData: r.systemData ?? worldSystemData(at),
    properties: { ...(o.defaults ?? {}), ...(r.properties ?? {}) },
  };
}

/** The created and modified times of a stored body (its systemData), else `at`. */
export function resourceTimes(body: Record<string, unknown>, at: string): { createdAt: string; updatedAt: string } {
  const s = (body.systemData ?? {}) as { createdAt?: string; lastModifiedAt?: string };
  return { createdAt: s.createdAt ?? at, updatedAt: s.lastModifiedAt ?? s.createdAt ?? at };
}

/** A stored body as the file writes it: its fields but id and type (and location/tags when absent). */
export function fileResource(body: Record<string, any>): FileResource {
  return {
    name: body.name,
    ...(body.location !== undefined ? { location: body.location } : {}),
    ...(body.tags && Object.keys(body.tags).length ? { tags: body.tags } : {}),
    ...(body.identity ? { identity: body.identity } : {}),
    ...(body.systemData ? { systemData: body.systemData } : {}),
    properties: body.properties ?? {},
  };
}
