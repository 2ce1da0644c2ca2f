/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, the .cpuprofile JSON): the functions with
 * the most self time and the most inclusive time, as `file:line function` relative to the
 * project, so a missed target can be routed to the code that costs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './root';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** One function's share of the profile. */
export interface HotFunction {
  /** `lib/x.ts:12 fn` (node_modules and node: internals shortened). */
  where: string;
  /** Self time, ms. */
  selfMs: number;
  /** Inclusive time (self + callees), ms. */
  totalMs: number;
  /** Self time as % of the profile's busy (non-idle) time. */
  selfPct: number;
}

/** The profile's totals and its hottest functions. */
export interface ProfileSummary {
  file: string;
  /** Wall time covered, ms. */
  wallMs: number;
  /** Time not idle/program/gc-free, ms (samples outside "(idle)"). */
  busyMs: number;
  gcMs: number;
  topSelf: HotFunction[];
  topTotal: HotFunction[];
  /**
   * Self time by area — a project file, a package (`node_modules/pg`), a Node module
   * (`node:zlib`), wasm, GC — with native frames (no URL, e.g. a write syscall) charged to the
   * nearest caller that has one. ms, busiest first.
   */
  byArea: { area: string; ms: number; pct: number }[];
}

function area(url: string): string {
  if (!url) return '';
  if (url.startsWith('wasm://')) return 'wasm';
  if (url.startsWith('node:internal/')) return url.split('/').slice(0, 2).join('/');
  if (url.startsWith('node:')) return url.replace(/\/.*$/, '');
  if (url.startsWith('file://')) url = url.slice(7);
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `node_modules/${nm[1]}`;
  if (url.startsWith(ROOT)) url = path.relative(ROOT, url);
  if (url.startsWith('.next')) return 'next route bundles';
  return url;
}

function where(cf: ProfileNode['callFrame']): string {
  let url = cf.url || '';
  if (url.startsWith('file://')) url = url.slice(7);
  if (url.startsWith(ROOT)) url = path.relative(ROOT, url);
  url = url.replace(/^.*node_modules\//, 'node_modules/');
  const name = cf.functionName || '(anonymous)';
  return url ? `${url}:${cf.lineNumber + 1} ${name}` : name;
}

/** Reads and summarises a .cpuprofile; `top` functions per list. */
export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) byId.set(n.id, n);
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const total = new Map<string, number>();
  let busy = 0;
  let gc = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = (prof.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(prof.samples[i]);
    if (!node) continue;
    const name = node.callFrame.functionName;
    if (name === '(idle)') continue;
    busy += dt;
    if (name === '(garbage collector)') gc += dt;
    const key = where(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + dt);
    let a = name === '(garbage collector)' ? 'GC' : name === '(program)' ? '(program)' : '';
    for (let id: number | undefined = node.id; !a && id !== undefined; id = parent.get(id)) a = area(byId.get(id)!.callFrame.url);
    a ||= '(native, no caller)';
    areas.set(a, (areas.get(a) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = where(byId.get(id)!.callFrame);
      if (k === '(root)' || seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + dt);
    }
  }
  const mk = (k: string): HotFunction => ({
    where: k,
    selfMs: Math.round(self.get(k) ?? 0),
    totalMs: Math.round(total.get(k) ?? 0),
    selfPct: busy ? Math.round(((self.get(k) ?? 0) / busy) * 1000) / 10 : 0,
  });
  const topSelf = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k]) => mk(k));
  const topTotal = [...total.entries()]
    .filter(([k]) => !/^\((program|root)\)$/.test(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k]) => mk(k));
  const byArea = [...areas.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([a, ms]) => ({ area: a, ms: Math.round(ms), pct: busy ? Math.round((ms / busy) * 1000) / 10 : 0 }));
  return { file: path.relative(ROOT, file), wallMs: Math.round((prof.endTime - prof.startTime) / 1000), busyMs: Math.round(busy), gcMs: Math.round(gc), byArea, topSelf, topTotal };
}
