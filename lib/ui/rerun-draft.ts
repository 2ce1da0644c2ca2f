/**
 * "Re-run with changes": the New job editor starts from a job's YAML with what was given at
 * launch beside it (JobDetail.launch — a name, envs) written into the text, so that submitting
 * the draft unchanged submits what ran, and every value is there to edit. Comments and layout of
 * the rest stay as submitted (the `yaml` library's document model).
 */
import { isMap, parseAllDocuments, type Document } from 'yaml';
import type { JobDetail } from '@/lib/api/types';
import { YAML_WRITE } from '../jobs/spec/text';

/** A document of several holding only `name`: the pipeline's name (lib/jobs/spec's header rule). */
function isHeader(doc: Document, count: number): boolean {
  const v = doc.toJS() as unknown;
  return count > 1 && v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'name' in v;
}

/**
 * `yaml` with `launch` written in: the name as the header document's name (one is added when
 * missing), or as the `name` of a single task that has none; each env in every task's
 * `envs` (the launch value wins, as it did on submit). The text unchanged when there is nothing
 * to write or it does not parse (the editor then shows its errors).
 */
export function draftWithLaunch(yaml: string, launch: JobDetail['launch'] | undefined): string {
  const envs = Object.entries(launch?.envs ?? {});
  if (!launch || (launch.name === null && envs.length === 0)) return yaml;
  const docs = parseAllDocuments(yaml);
  if (!Array.isArray(docs) || docs.length === 0 || docs.some((d) => d.errors.length > 0)) return yaml;
  const header = isHeader(docs[0], docs.length) ? docs[0] : null;
  const tasks = header ? docs.slice(1) : docs;
  if (tasks.some((d) => !isMap(d.contents))) return yaml;
  for (const doc of tasks) {
    for (const [k, v] of envs) {
      if (!isMap(doc.get('envs'))) doc.set('envs', doc.createNode({}));
      doc.setIn(['envs', k], v);
    }
  }
  let prefix = '';
  if (launch.name !== null) {
    if (header) header.set('name', launch.name);
    // A task's own name stays its own: the job's name then goes in a header document.
    else if (tasks.length > 1 || tasks[0].has('name')) prefix = `name: ${JSON.stringify(launch.name)}\n---\n`;
    else tasks[0].set('name', launch.name);
  }
  return prefix + docs.map((d, i) => (i === 0 ? d.toString(YAML_WRITE) : `---\n${d.toString(YAML_WRITE).replace(/^---\n/, '')}`)).join('');
}
