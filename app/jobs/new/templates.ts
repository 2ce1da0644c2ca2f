/**
 * Reads the New job page's templates from the project's `templates/` folder (server only: the
 * page is rendered on the server and hands them to the editor). One file per template; its
 * leading comment is its description (lib/ui/templates.ts toTemplate).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { toTemplate, type JobTemplate } from '@/lib/ui/templates';

/** Shown first, in this order; other templates follow alphabetically. */
const ORDER = ['single-command', 'pipeline-with-retries', 'training-with-setup'];

/**
 * Every `*.yaml` in `<root>/templates` (root defaults to the working directory, the project
 * folder for `server.ts`). A missing folder gives an empty list.
 */
export function loadTemplates(root: string = process.cwd()): JobTemplate[] {
  const dir = path.join(/*turbopackIgnore: true*/ root, 'templates');
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'));
  } catch {
    return [];
  }
  const out = files.map((f) => toTemplate(f.replace(/\.ya?ml$/, ''), readFileSync(path.join(dir, f), 'utf8')));
  const rank = (id: string) => (ORDER.includes(id) ? ORDER.indexOf(id) : ORDER.length);
  return out.sort((a, b) => rank(a.id) - rank(b.id) || a.id.localeCompare(b.id));
}
