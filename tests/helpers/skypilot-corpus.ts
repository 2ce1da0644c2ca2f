/**
 * The SkyPilot corpus (tests/fixtures/skypilot/*.yaml): one task file per key and form, each
 * saying its expected outcome in `# expect:` lines — `accepted`, `warning: <text>` (accepted with
 * that warning), `refused: <text>`, `required: <text>` (valid, but a submit must give that value).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The corpus folder. */
export const SKYPILOT_CORPUS = path.resolve(__dirname, '..', 'fixtures', 'skypilot');

/** One corpus file: its name, text and expected outcome. */
export interface CorpusFile {
  file: string;
  text: string;
  accepted: boolean;
  /** Texts each warning must hold (exactly this many warnings). */
  warnings: string[];
  /** Texts the refusal must hold. */
  refusals: string[];
  /** Texts of the values required at launch (validate: ok, listed apart; submit without them: refused). */
  required: string[];
}

/** Every corpus file, sorted by name. */
export function skypilotCorpus(): CorpusFile[] {
  return readdirSync(SKYPILOT_CORPUS)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(SKYPILOT_CORPUS, file), 'utf8');
      const lines = [...text.matchAll(/^# expect: (.*)$/gm)].map((m) => m[1].trim());
      const warnings = lines.filter((l) => l.startsWith('warning: ')).map((l) => l.slice('warning: '.length));
      const refusals = lines.filter((l) => l.startsWith('refused: ')).map((l) => l.slice('refused: '.length));
      const required = lines.filter((l) => l.startsWith('required: ')).map((l) => l.slice('required: '.length));
      return { file, text, accepted: refusals.length === 0 && required.length === 0, warnings, refusals, required };
    });
}
