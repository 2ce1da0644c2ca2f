/**
 * The registry of the API's named schemas (the OpenAPI document's components: lib/api/openapi.ts)
 * and named(), which registers one. Its own module so that the schema files (schemas.ts,
 * schemas-flow.ts) share it without importing each other both ways.
 */
import { z } from 'zod';

/** Metadata the OpenAPI generator reads: `id` names a component under #/components/schemas. */
export interface SchemaMeta {
  id?: string;
  description?: string;
  [k: string]: unknown;
}

/** Registry of the named schemas that become OpenAPI components. */
export const apiRegistry = z.registry<SchemaMeta>();

/** Registers a schema as a named OpenAPI component (`id`) with its description. */
export function named<T extends z.ZodType>(schema: T, id: string, description: string): T {
  const described = schema.meta({ description }) as T;
  apiRegistry.add(described, { id });
  return described;
}
