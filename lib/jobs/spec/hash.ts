/**
 * A normalized spec's identity (stored with a job: a repeated submission id must name the same
 * spec). Server-only: the one node:* import of the spec module; keep it out of browser code.
 */
import { createHash } from 'node:crypto';
import type { PipelineSpec } from './schema';

/** sha256 (hex) of the canonical JSON (keys sorted, no spaces) of a normalized spec. */
export function specHash(spec: PipelineSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/** Canonical JSON: object keys sorted, undefined members left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}
