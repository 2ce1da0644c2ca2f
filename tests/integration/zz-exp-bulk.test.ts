import { afterAll, beforeAll, describe, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server';

describe('exp server', () => {
  let s: ServerProcess;
  beforeAll(async () => { s = await startServerProcess({ env: {} }); }, 120_000);
  afterAll(async () => { await s?.dispose(); });
  const status = async (id: number) => ((await (await s.api(`/api/jobs/${id}`)).json()) as { status: string }).status;
  it('bulk', async () => {
    for (let round = 0; round < 25; round++) {
      const ids = await Promise.all([1, 2].map(async (i) => ((await (await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: `name: b${i}\nrun: sleep 300\n` })).json()) as { id: number }).id));
      for (const id of ids) while ((await status(id)) !== 'RUNNING') await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, (round % 5) * 100));
      const t0 = Date.now();
      await s.api('/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids }) });
      const took: number[] = [];
      for (const id of ids) { for (let k = 0; k < 3000 && (await status(id)) !== 'CANCELLED'; k++) await new Promise((r) => setTimeout(r, 20)); took.push(Date.now() - t0); }
      console.log('ROUND', round, took);
      if (took[1] > 3000) { console.log(s.output().split('\n').filter((l) => ids.some((id) => l.includes(`"jobId":${id}`))).join('\n')); break; }
    }
  }, 900_000);
});
