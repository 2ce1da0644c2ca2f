/**
 * SkyPilot's `resources.accelerators` read as GPU alternatives (docs/spec.md "accelerators"):
 * `A100`, `A100:2`, `{A100: 2}`, alternatives `{A100: 1, V100: 1}` or `[A100:1, V100:1]` (in the
 * order written: the first one the executor has wins), and a share of one GPU, `T4:0.5`. Pure.
 */
import { MAX_GPUS, type GpuOption } from '../gpus';

export { MAX_GPUS, type GpuOption } from '../gpus';

/** Most alternatives one `accelerators` value may list. */
export const MAX_GPU_ALTERNATIVES = 16;

const FORM = 'write a type and a count, e.g. A100:2, T4:0.5 (a share of one GPU), or alternatives {A100: 1, V100: 1}';

/** What is wrong with one type name, or null. */
function typeProblem(type: string): string | null {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(type) ? null : `expected a GPU type (letters, digits, _ . -), got ${JSON.stringify(type)}: ${FORM}`;
}

/** One count: whole 1–64, or a share 0 < n < 1 in thousandths; else what is wrong. */
function countOf(raw: unknown): number | string {
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  const wrong = `expected a GPU count — a whole number from 1 to ${MAX_GPUS}, or a share of one GPU between 0 and 1 (e.g. 0.5) — got ${JSON.stringify(raw)}: ${FORM}`;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return wrong;
  if (n < 1) return Math.abs(Math.round(n * 1000) - n * 1000) < 1e-6 && n >= 0.001 ? n : wrong;
  return Number.isInteger(n) && n <= MAX_GPUS ? n : wrong;
}

/** `TYPE` or `TYPE:COUNT` → an option, or what is wrong. */
function fromString(v: string): GpuOption | string {
  const i = v.lastIndexOf(':');
  const type = (i < 0 ? v : v.slice(0, i)).trim();
  const t = typeProblem(type);
  if (t) return t;
  const count = i < 0 ? 1 : countOf(v.slice(i + 1).trim());
  return typeof count === 'string' ? count : { type, count };
}

/** `{TYPE: COUNT, …}` → options in the order written, or what is wrong. */
function fromMap(v: Record<string, unknown>): GpuOption[] | string {
  const out: GpuOption[] = [];
  for (const [k, raw] of Object.entries(v)) {
    const type = k.trim();
    const t = typeProblem(type);
    if (t) return t;
    const count = raw === null || raw === undefined ? 1 : countOf(raw);
    if (typeof count === 'string') return `${type}: ${count}`;
    out.push({ type, count });
  }
  return out;
}

/**
 * The GPU alternatives `accelerators` asks for, per node, in order of preference; a string saying
 * what is wrong with it; null when absent.
 */
export function parseAccelerators(v: unknown): GpuOption[] | string | null {
  if (v === undefined || v === null) return null;
  let out: GpuOption[] = [];
  if (typeof v === 'string') {
    const o = fromString(v);
    if (typeof o === 'string') return o;
    out = [o];
  } else if (Array.isArray(v)) {
    for (const item of v) {
      const o = typeof item === 'string' ? fromString(item) : item && typeof item === 'object' && !Array.isArray(item) ? fromMap(item as Record<string, unknown>) : `expected a GPU type and count in the list, got ${JSON.stringify(item)}: ${FORM}`;
      if (typeof o === 'string') return o;
      out.push(...(Array.isArray(o) ? o : [o]));
    }
  } else if (typeof v === 'object') {
    const o = fromMap(v as Record<string, unknown>);
    if (typeof o === 'string') return o;
    out = o;
  } else return `expected a GPU type and count: ${FORM}`;
  if (out.length === 0) return `expected at least one GPU type: ${FORM}`;
  if (out.length > MAX_GPU_ALTERNATIVES) return `expected at most ${MAX_GPU_ALTERNATIVES} alternatives, got ${out.length}`;
  return out;
}
