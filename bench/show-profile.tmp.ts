import { summarizeProfile } from './lib/profile';
const s = summarizeProfile(process.argv[2], 25);
console.log('wall', s.wallMs, 'busy', s.busyMs);
for (const a of s.byArea) console.log(String(a.ms).padStart(6), `${a.pct}%`.padStart(6), a.area);
