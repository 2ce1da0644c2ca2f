/**
 * Prints the summary of a CPU profile the bench saved (bench/results/*.cpuprofile.json, or any
 * .cpuprofile): busy time, self time by area, hottest functions by self and inclusive time.
 *
 *   node --import tsx bench/profile-summary.ts bench/results/submit-postgresql-submit.cpuprofile.json [top]
 */
import { summarizeProfile } from './lib/profile';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/profile-summary.ts <profile.json> [top=20]');
  process.exit(2);
}
const s = summarizeProfile(file, Number(topArg) || 20);
const line = (ms: number, pct: number | null, what: string) => `${String(ms).padStart(7)} ms ${pct === null ? '      ' : `${pct.toFixed(1).padStart(5)}%`}  ${what}`;
console.log(`${s.file}: wall ${s.wallMs} ms, busy ${s.busyMs} ms, GC ${s.gcMs} ms\n\nself time by area:`);
for (const a of s.byArea) console.log(line(a.ms, a.pct, a.area));
console.log('\nself time:');
for (const f of s.topSelf) console.log(line(f.selfMs, f.selfPct, f.where));
console.log('\ninclusive time:');
for (const f of s.topTotal) console.log(line(f.totalMs, null, f.where));
