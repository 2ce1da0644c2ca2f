import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, visit, type Document, type Node, type YAMLMap } from 'yaml';
import { MASKED_VALUE, maskEnvs } from '../auth/secrets';
import { YAML_WRITE } from '../jobs/spec/text';

export { maskEnvs };

/** What maskSpecYaml() answers when the text cannot be parsed (it then cannot tell what to hide). */
export const UNMASKABLE_SPEC = '# (the submitted YAML cannot be shown: it could not be parsed to mask its secrets)\n';

/**
 * Returns the job YAML fit for display: in every document, the values of every `envs:` mapping
 * go through maskEnvs() (lib/auth/secrets.ts — secret-looking names, passwords inside URLs), and
 * every value of a `secrets:` mapping is MASKED_VALUE (a secret is never shown, whatever its name),
 * following aliases and `<<` merge keys to the mapping they name. Everything else — comments,
 * order, formatting of other keys — is kept as submitted. Text that does not parse is never
 * echoed (UNMASKABLE_SPEC instead).
 */
export function maskSpecYaml(text: string): string {
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text) as Document.Parsed[];
  } catch {
    return UNMASKABLE_SPEC;
  }
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return UNMASKABLE_SPEC;
  let changed = false;
  for (const doc of docs) {
    const seen = new Set<Node>();
    const resolve = (n: unknown): unknown => (isAlias(n) ? n.resolve(doc) : n);
    const maskMap = (m: YAMLMap, all: boolean) => {
      if (seen.has(m)) return;
      seen.add(m);
      for (const pair of m.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const value = resolve(pair.value);
        if (key === '<<') {
          for (const src of isSeq(value) ? value.items.map(resolve) : [value]) if (isMap(src)) maskMap(src, all);
          continue;
        }
        if (!isScalar(value) || value.value === null || typeof value.value === 'object') continue;
        const raw = String(value.value);
        const masked = all ? MASKED_VALUE : maskEnvs({ [key]: raw })[key];
        if (masked !== raw) {
          value.value = masked;
          changed = true;
        }
      }
    };
    visit(doc, {
      Pair(_, pair) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (key !== 'envs' && key !== 'secrets') return;
        const value = resolve(pair.value);
        if (isMap(value)) maskMap(value, key === 'secrets');
      },
    });
  }
  if (!changed) return text;
  try {
    return docs.map((d, i) => (i === 0 ? d.toString(YAML_WRITE) : `---\n${d.toString(YAML_WRITE).replace(/^---\n/, '')}`)).join('');
  } catch {
    return UNMASKABLE_SPEC;
  }
}
