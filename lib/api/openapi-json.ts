/**
 * The pieces the OpenAPI document (lib/api/openapi.ts, openapi-team.ts) is built from: JSON
 * Schema generated from zod schemas with zod 4's `z.toJSONSchema`, component references, query
 * parameters from a zod object's fields, and the answer shapes every path uses.
 */
import { z } from 'zod';

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** A reference to the named component `id` (lib/api/schemas.ts `named`). */
export const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });

/** Converts one zod schema (request side: input types) to an inline JSON Schema. */
export function inline(schema: z.ZodType): Json {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete js.$schema;
  return js;
}

/** Query parameters from the fields of a zod object schema (`extra`: more of each one's keys). */
export function queryParams(schema: z.ZodObject, extra: Record<string, Json> = {}): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const f = field as z.ZodType;
    const js = inline(f);
    const description = (js.description as string | undefined) ?? f.description;
    delete js.description;
    const p: Json = { name, in: 'query', required: !f.safeParse(undefined).success, schema: js, ...extra[name] };
    if (description) p.description = description;
    return p;
  });
}

/** An error answer: `application/problem+json` (RFC 9457). */
export const problem = (description: string): Json => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } });

/** A JSON answer whose schema is the component `id`. */
export const json = (id: string, description: string): Json => ({ description, content: { 'application/json': { schema: ref(id) } } });

/** A required JSON request body whose schema is the component `id`. */
export const jsonBody = (id: string): Json => ({ required: true, content: { 'application/json': { schema: ref(id) } } });
