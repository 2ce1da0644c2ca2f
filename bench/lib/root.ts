import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (where server.ts is). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where results (and CPU profiles) are written: bench/results (its *.json are gitignored). */
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
