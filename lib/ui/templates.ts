/**
 * The New job page's templates as the editor shows them: the shape, and how a template's
 * leading comment becomes its one-sentence summary. Pure, browser-safe; the files are read on
 * the server (app/jobs/new/templates.ts).
 */

/** One template offered in the editor. */
export interface JobTemplate {
  /** File name without `.yaml` (e.g. `pipeline-with-retries`). */
  id: string;
  /** The spec's first `name:` (or the id). */
  name: string;
  /** The file's leading `#` comment lines, joined (the whole story, for a tooltip). */
  description: string;
  /**
   * What the template is, in a sentence: the first comment line — continued over the next
   * lines while its sentence goes on (a line ending in `,`, `:` or a word), at most 200
   * characters.
   */
  summary: string;
  yaml: string;
}

/** The spec the editor starts with when no template is chosen (and no templates exist). */
export const STARTER_YAML = `# A job: a name and the command to run. Add tasks with --- between documents.
name: hello
run: |
  echo "hello from jobdeck"
`;

/** Parses one template file into a template. */
export function toTemplate(id: string, yaml: string): JobTemplate {
  const lines = yaml.split('\n');
  const comment: string[] = [];
  for (const l of lines) {
    if (!l.startsWith('#')) break;
    comment.push(l.replace(/^#\s?/, ''));
  }
  const name = /^name:\s*["']?([^"'\n#]+?)["']?\s*(?:#.*)?$/m.exec(yaml)?.[1] ?? id;
  return { id, name, description: comment.join(' ').trim(), summary: summarise(comment), yaml };
}

/** Characters of a summary at most (cut at a word, with an ellipsis). */
const SUMMARY_MAX = 200;

/** The first comment line, continued while its sentence does (see JobTemplate.summary). */
export function summarise(comment: string[]): string {
  const lines = comment.map((l) => l.trim());
  const first = lines.findIndex((l) => l !== '');
  if (first < 0) return '';
  let out = lines[first];
  for (let i = first + 1; i < lines.length && lines[i] && !/[.;!?)]$/.test(out); i++) out += ` ${lines[i]}`;
  // Joined lines may hold the next sentence too: stop at the first sentence's end.
  const end = /[.!?](?=\s)/g;
  for (let m; (m = end.exec(out)); ) {
    if (m.index >= 20) {
      out = out.slice(0, m.index + 1);
      break;
    }
  }
  if (out.length <= SUMMARY_MAX) return out;
  const cut = out.slice(0, SUMMARY_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > SUMMARY_MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:—-]+$/, '')}…`;
}
