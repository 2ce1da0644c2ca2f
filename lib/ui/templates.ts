/**
 * The New job page's templates: the project's example specs (examples/*.yaml), read on the
 * server (Node only — never import this from a client component). Each template carries the
 * file's leading comment as its description.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One example spec offered in the editor. */
export interface JobTemplate {
  /** File name without `.yaml` (e.g. `seed-retry-pipeline`). */
  id: string;
  /** The spec's first `name:` (or the id). */
  name: string;
  /** The file's leading `#` comment lines, joined. */
  description: string;
  yaml: string;
}

/** Shown first, in this order; other examples follow alphabetically. */
const ORDER = ['hello', 'seed-retry-pipeline', 'middle-task-retry', 'setup-fails', 'training-like', 'hostile-output'];

/** The spec the editor starts with when no template is chosen (and no examples exist). */
export const STARTER_YAML = `# A job: a name and the command to run. Add tasks with --- between documents.
name: hello
run: |
  echo "hello from jobdeck"
`;

/** Parses one example file into a template. */
export function toTemplate(id: string, yaml: string): JobTemplate {
  const lines = yaml.split('\n');
  const comment: string[] = [];
  for (const l of lines) {
    if (!l.startsWith('#')) break;
    comment.push(l.replace(/^#\s?/, ''));
  }
  const name = /^name:\s*["']?([^"'\n#]+?)["']?\s*(?:#.*)?$/m.exec(yaml)?.[1] ?? id;
  return { id, name, description: comment.join(' ').trim(), yaml };
}

/**
 * Reads every `*.yaml` in `<root>/examples` (root defaults to the working directory, which is
 * the project folder for `server.ts`). A missing folder gives an empty list.
 */
export function loadTemplates(root: string = process.cwd()): JobTemplate[] {
  const dir = path.join(root, 'examples');
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
