// Generates the Prisma client offline.
// The Prisma CLI tries to download its native schema engine before `generate`, which this
// network cannot reach; the generator itself never runs that engine, so pointing
// PRISMA_SCHEMA_ENGINE_BINARY at any existing file lets `generate` work offline.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const env = { ...process.env };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = existsSync('/bin/true') ? '/bin/true' : '/usr/bin/true';
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
env.CHECKPOINT_DISABLE = '1';
const cli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js');
const r = spawnSync(process.execPath, [cli, 'generate', '--schema', path.join(root, 'prisma', 'schema.prisma')], { cwd: root, env, stdio: 'inherit' });
process.exit(r.status ?? 1);
