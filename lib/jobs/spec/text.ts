/**
 * What text jobdeck accepts from a user, wherever it comes from (a spec's values and keys, the
 * YAML text itself, overrides, metadata, query parameters): the one rule the spec, the API's
 * request schemas and /api/validate all call, so they agree (docs/spec.md "Text").
 *
 * Text is stored in PostgreSQL (`text` and `jsonb` columns), which holds neither a NUL character
 * nor a lone UTF-16 surrogate (not a character: no UTF-8 form; `jsonb` refuses its `\ud800`
 * escape). Both are refused here, with what and where, instead of failing in the database.
 * Pure: no node:* import.
 */

/** The first NUL or lone surrogate of `s` and its UTF-16 index; null when there is none. */
export function unstorableAt(s: string): { index: number; what: string } | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return { index: i, what: 'a NUL character (U+0000)' };
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return { index: i, what: `a lone surrogate (U+${c.toString(16).toUpperCase()}, not a character)` };
    }
    if (c >= 0xdc00 && c <= 0xdfff) return { index: i, what: `a lone surrogate (U+${c.toString(16).toUpperCase()}, not a character)` };
  }
  return null;
}

/**
 * Checks a user's string: null when it can be stored, else the problem ("expected text without
 * a NUL character (U+0000) at character 3"). Linear, no allocation for good text.
 */
export function textProblem(s: string): string | null {
  const bad = unstorableAt(s);
  return bad ? `expected text without ${bad.what}, found at character ${bad.index + 1}` : null;
}
