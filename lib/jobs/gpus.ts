/**
 * GPUs as devices (docs/design.md §6 "GPUs"): what a job asks for (alternatives of one type and a
 * count, a count below 1 being a share of one device), what an executor has (its devices, each
 * with an index and, where known, a type), and the pool that grants specific devices to jobs —
 * the one place that decides which device a job gets. Pure: admission (lib/jobs/capacity.ts)
 * plans with it, the local executor only reads the grant.
 */

/** One alternative of a task's `accelerators`: a GPU type and how many per node. */
export interface GpuOption {
  /** As written (`A100`, `A100-80GB`); matched against a device's type by {@link typeMatches}. */
  type: string;
  /** Whole GPUs (1–64), or a share of one GPU (0 < count < 1, SkyPilot's fractional GPUs). */
  count: number;
}

/** One GPU of an executor (the local machine's: nvidia-smi, or the operator's JOBDECK_LOCAL_GPUS). */
export interface GpuDevice {
  /** The device's index (`nvidia-smi` index, `/dev/nvidia<index>`, a CUDA_VISIBLE_DEVICES entry). */
  index: number;
  /** Its type (`A100`, or nvidia-smi's name `NVIDIA A100-SXM4-80GB`); null: untyped (any type matches). */
  type: string | null;
  /** Its memory in MiB, when nvidia-smi tells. */
  memoryMiB?: number;
  /** nvidia-smi's uuid (`GPU-…`), which `--query-compute-apps` names devices by. */
  uuid?: string;
}

/** Devices granted to one job: the option it got and each device with the share it holds (1 = whole). */
export interface GpuGrant {
  type: string;
  /** GPUs per node as granted (the option's count). */
  count: number;
  devices: Array<{ index: number; share: number }>;
}

/** Largest whole count a task may ask for, per node. */
export const MAX_GPUS = 64;

/** Shares are summed in these steps, so 0.1 + 0.2 never misses 0.3 (1/1000 of a GPU). */
const STEP = 1000;
const units = (share: number) => Math.round(share * STEP);

function tokens(s: string): string[] {
  return s
    .toUpperCase()
    .split(/[\s_-]+/)
    .filter(Boolean);
}

/**
 * True when a device of type `device` (null: untyped) can serve `wanted`: untyped devices serve
 * any type; else every part of the wanted name (split at `-`, `_` and spaces, ignoring case) is a
 * part of the device's name — `A100` and `A100-80GB` both match `NVIDIA A100-SXM4-80GB`, `V100`
 * does not.
 */
export function typeMatches(wanted: string, device: string | null): boolean {
  if (device === null) return true;
  const have = new Set(tokens(device));
  const want = tokens(wanted);
  return want.length > 0 && want.every((t) => have.has(t));
}

/** `2 GPUs`, `1 GPU`, `0.5 GPU`. */
export function gpuCount(n: number): string {
  const shown = Number.isInteger(n) ? String(n) : String(Math.round(n * 1000) / 1000);
  return `${shown} GPU${n === 1 || n < 1 ? '' : 's'}`;
}

/** `A100:2`, `T4:0.5`. */
export function optionText(o: GpuOption): string {
  return `${o.type}:${o.count}`;
}

/** The GPUs a grant holds in all (its count; a share counts as its fraction). */
export function grantedGpus(g: GpuGrant | null | undefined): number {
  return g ? g.devices.reduce((a, d) => a + d.share, 0) : 0;
}

/**
 * An executor's devices while a plan is made: what each device has left (a whole device 1, a
 * device partly shared its free share, a held one 0), which are held by processes jobdeck did
 * not start, and the grants made so far.
 */
export class GpuPool {
  /** Free thousandths per device index. */
  private readonly free = new Map<number, number>();
  /** Devices with a share granted (a whole grant needs a device no one shares). */
  private readonly shared = new Set<number>();

  /**
   * @param devices the executor's devices
   * @param granted grants of the jobs that hold GPUs now (active, or being reaped)
   * @param held indices held by processes jobdeck did not start (never granted)
   */
  constructor(
    readonly devices: readonly GpuDevice[],
    granted: ReadonlyArray<GpuGrant | null | undefined> = [],
    readonly held: ReadonlySet<number> = new Set(),
  ) {
    for (const d of devices) this.free.set(d.index, held.has(d.index) ? 0 : STEP);
    for (const g of granted) if (g) this.take(g);
  }

  /** Marks a grant's devices taken (one made by this pool, or read back from the database). */
  take(g: GpuGrant): void {
    for (const d of g.devices) {
      const left = this.free.get(d.index);
      if (left === undefined) continue; // a device the executor no longer reports
      this.free.set(d.index, Math.max(0, left - units(d.share)));
      if (d.share < 1) this.shared.add(d.index);
    }
  }

  /** The devices that can serve `type`, by index. */
  private matching(type: string): GpuDevice[] {
    return this.devices.filter((d) => typeMatches(type, d.type)).sort((a, b) => a.index - b.index);
  }

  /** True when the executor has a device of this type at all. */
  has(type: string): boolean {
    return this.matching(type).length > 0;
  }

  /** How many devices could ever serve `o` (ignoring what is granted now). */
  capacityFor(o: GpuOption): number {
    return this.matching(o.type).length;
  }

  /**
   * The devices `o` would get now, without taking them: for a whole count, that many devices no
   * one holds any of (lowest indices first); for a share, the one device with the least free
   * share that still fits it (shares pack onto as few devices as possible, leaving whole
   * devices whole). null when it does not fit now.
   */
  fit(o: GpuOption): GpuGrant | null {
    const m = this.matching(o.type);
    if (o.count < 1) {
      const need = units(o.count);
      let best: GpuDevice | null = null;
      for (const d of m) {
        const left = this.free.get(d.index) ?? 0;
        if (left >= need && (best === null || left < (this.free.get(best.index) ?? 0))) best = d;
      }
      return best ? { type: o.type, count: o.count, devices: [{ index: best.index, share: o.count }] } : null;
    }
    const whole = m.filter((d) => this.free.get(d.index) === STEP && !this.shared.has(d.index));
    if (whole.length < o.count) return null;
    return { type: o.type, count: o.count, devices: whole.slice(0, o.count).map((d) => ({ index: d.index, share: 1 })) };
  }

  /**
   * Grants the first of `options` (in order) that fits now, and takes its devices; null when none
   * does. Options of a type the executor has no device of are skipped.
   */
  grant(options: readonly GpuOption[]): GpuGrant | null {
    for (const o of options) {
      const g = this.fit(o);
      if (g) {
        this.take(g);
        return g;
      }
    }
    return null;
  }

  /**
   * Why `options` do not fit now, for a pending reason, about the first option the executor has
   * a device of: `needs 2 GPUs, 1 of 4 free` (whole devices of that type free, of all of that
   * type), `needs 0.5 of a GPU, 0.25 of one free at most` (the largest free share). The type is
   * named when the devices are typed: `needs 2 GPUs (A100), 1 of 2 free`.
   */
  shortReason(options: readonly GpuOption[]): string {
    const o = options.find((x) => this.has(x.type)) ?? options[0];
    const m = this.matching(o.type);
    const typed = this.devices.some((d) => d.type !== null) ? ` (${o.type})` : '';
    if (o.count < 1) {
      const best = Math.max(0, ...m.map((d) => this.free.get(d.index) ?? 0)) / STEP;
      return `needs ${o.count} of a GPU${typed}, ${best} of one free at most`;
    }
    const whole = m.filter((d) => this.free.get(d.index) === STEP && !this.shared.has(d.index)).length;
    return `needs ${gpuCount(o.count)}${typed}, ${whole} of ${m.length} free`;
  }

  /**
   * Why `options` can never be granted here, or null when one can once devices are free: no
   * device of any of the types, or fewer devices of it than asked for.
   */
  never(options: readonly GpuOption[]): string | null {
    if (options.some((o) => this.capacityFor(o) >= Math.ceil(o.count))) return null;
    const typed = this.devices.some((d) => d.type !== null);
    const types = [...new Set(this.devices.map((d) => d.type ?? ''))].filter(Boolean);
    const has = typed ? `${this.devices.length} (${types.join(', ')})` : String(this.devices.length);
    return `asks for ${options.map(optionText).join(' or ')} but the executor has ${has} GPU${this.devices.length === 1 ? '' : 's'}`;
  }
}

/**
 * The devices of `JOBDECK_LOCAL_GPUS`: an integer `N` (N untyped GPUs, indices 0…N−1), or typed
 * groups `A100:4` / `A100:2,V100:2` (indices in the order given). Null when unset or empty.
 * @throws Error naming the variable for anything else.
 */
export function parseLocalGpus(raw: string | undefined): GpuDevice[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const text = raw.trim();
  const bad = () => new Error(`JOBDECK_LOCAL_GPUS must be a GPU count (e.g. 4) or typed counts (e.g. A100:4 or A100:2,V100:2), got ${JSON.stringify(raw)}`);
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n > 1024) throw bad();
    return Array.from({ length: n }, (_, index) => ({ index, type: null }));
  }
  const out: GpuDevice[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\s*:\s*(\d+)\s*$/.exec(part);
    if (!m || Number(m[2]) < 1) throw bad();
    for (let i = 0; i < Number(m[2]); i++) out.push({ index: out.length, type: m[1] });
    if (out.length > 1024) throw bad();
  }
  return out;
}

/**
 * The devices in `nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits`
 * output (`0, NVIDIA A100-SXM4-80GB, 81920, GPU-5f1c…`), by index. Lines that are not such a row
 * (a warning, an empty line) are skipped.
 */
export function parseNvidiaSmiGpus(out: string): GpuDevice[] {
  const devices: GpuDevice[] = [];
  for (const line of out.split('\n')) {
    const f = line.split(',').map((s) => s.trim());
    if (f.length < 2 || !/^\d+$/.test(f[0]) || f[1] === '') continue;
    const mem = f.length > 2 ? Number(f[2].replace(/\s*MiB$/i, '')) : NaN;
    const uuid = f.length > 3 && /^GPU-[0-9A-Fa-f-]+$/.test(f[3]) ? f[3] : null;
    devices.push({ index: Number(f[0]), type: f[1], ...(Number.isFinite(mem) && mem > 0 ? { memoryMiB: mem } : {}), ...(uuid ? { uuid } : {}) });
  }
  return devices.sort((a, b) => a.index - b.index);
}

/**
 * The pids and device uuids in `nvidia-smi --query-compute-apps=pid,gpu_uuid
 * --format=csv,noheader` output (`4242, GPU-5f1c…`); "No running processes found" and other
 * lines are skipped.
 */
export function parseComputeApps(out: string): Array<{ pid: number; uuid: string }> {
  const apps: Array<{ pid: number; uuid: string }> = [];
  for (const line of out.split('\n')) {
    const m = /^\s*(\d+)\s*,\s*(GPU-[0-9A-Fa-f-]+)\s*$/.exec(line);
    if (m) apps.push({ pid: Number(m[1]), uuid: m[2] });
  }
  return apps;
}

/** A grant as stored (Job.gpuGrant) read back tolerantly: null when absent or not a grant. */
export function readGrant(v: unknown): GpuGrant | null {
  if (!v || typeof v !== 'object') return null;
  const g = v as Partial<GpuGrant>;
  if (typeof g.type !== 'string' || typeof g.count !== 'number' || !Array.isArray(g.devices)) return null;
  const devices = g.devices.filter((d): d is { index: number; share: number } => !!d && Number.isInteger(d.index) && typeof d.share === 'number' && d.share > 0 && d.share <= 1);
  return { type: g.type, count: g.count, devices };
}

/** A job's GPU alternatives as stored (Job.gpuRequest) read back tolerantly: empty when none. */
export function readGpuOptions(v: unknown): GpuOption[] {
  if (!Array.isArray(v)) return [];
  return v.filter((o): o is GpuOption => !!o && typeof o.type === 'string' && typeof o.count === 'number' && o.count > 0);
}

/** The GPUs one attempt gets: its type and count per node, and on an executor that grants devices, which. */
export interface AttemptGpus {
  type: string;
  count: number;
  /** The devices (local); absent where the executor assigns them itself (Slurm's GRES). */
  devices?: Array<{ index: number; share: number }>;
}

/**
 * What an attempt of a task asking for `options` gets (docs/design.md §6 "GPUs"): with the job's
 * `grant` (local), the task's count of the granted type from the grant's devices — the first ones
 * (tasks of a pipeline may ask for fewer than the job holds), or the one shared device; without a
 * grant (Slurm, or a job admitted before grants were recorded), the first option. Null when the
 * task asks for none.
 */
export function attemptGpus(options: readonly GpuOption[] | undefined, grant: GpuGrant | null): AttemptGpus | null {
  if (!options || options.length === 0) return null;
  if (!grant || grant.devices.length === 0) return { type: options[0].type, count: options[0].count };
  const mine = options.find((o) => o.type.toUpperCase() === grant.type.toUpperCase()) ?? options[0];
  if (grant.count < 1 || mine.count < 1) {
    const d = grant.devices[0];
    return { type: grant.type, count: Math.min(mine.count, d.share), devices: [{ index: d.index, share: Math.min(mine.count, d.share) }] };
  }
  const devices = grant.devices.slice(0, Math.min(mine.count, grant.devices.length));
  return { type: grant.type, count: devices.length, devices };
}
