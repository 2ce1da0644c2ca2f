/**
 * SkyPilot's `resources.accelerators` read as one GPU type and a count (docs/spec.md
 * "accelerators"): `A100`, `A100:2`, or `{A100: 2}`. Alternatives (a list, a map of several) and
 * fractions are refused with the form to write. Pure.
 */

/** GPUs a task asks for, per node. */
export interface GpuRequest {
  /** As written (`A100`); the Slurm executor maps it to a GRES type. */
  type: string;
  /** Whole GPUs, ≥ 1. */
  count: number;
}

/** Most GPUs a task may ask for, per node. */
export const MAX_GPUS = 64;

const FORM = 'write one type and a whole count, e.g. A100:2 (or {A100: 2})';

/**
 * The GPUs `accelerators` asks for; a string saying what is wrong with it, or null when absent.
 */
export function parseAccelerators(v: unknown): GpuRequest | string | null {
  if (v === undefined || v === null) return null;
  let type: string;
  let raw: unknown;
  if (typeof v === 'string') {
    const i = v.lastIndexOf(':');
    type = (i < 0 ? v : v.slice(0, i)).trim();
    raw = i < 0 ? 1 : Number(v.slice(i + 1).trim());
  } else if (typeof v === 'object' && !Array.isArray(v)) {
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.length !== 1) return `alternatives (${entries.map(([k]) => k).join(', ') || 'none'}) are not supported: ${FORM}`;
    [type, raw] = [entries[0][0].trim(), entries[0][1] ?? 1];
  } else if (Array.isArray(v)) {
    return `a list of alternatives is not supported: ${FORM}`;
  } else return `expected a GPU type and count: ${FORM}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(type)) return `expected a GPU type (letters, digits, _ . -), got ${JSON.stringify(type)}: ${FORM}`;
  const count = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_GPUS) return `expected a whole GPU count from 1 to ${MAX_GPUS} (fractions are not supported), got ${JSON.stringify(raw)}: ${FORM}`;
  return { type, count };
}
