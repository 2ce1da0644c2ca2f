/**
 * What text jobdeck accepts from a user, wherever it comes from (a spec's values and keys, the
 * YAML text itself, overrides, metadata, query parameters): the one rule the spec, the API's
 * request schemas and /api/validate all call, so they agree (docs/spec.md "Text").
 *
 * Text is stored in PostgreSQL (`text` and `jsonb` columns), which holds neither a NUL character
 * nor a lone UTF-16 surrogate (not a character: no UTF-8 form; `jsonb` refuses its `\ud800`
 * escape). Both are refused here, with what and where, instead of failing in the database.
 *
 * Names (a job's, a task's, a strategy's — every name-like field) are shown in the dashboard and
 * the terminal, so they must also not hide, reorder or fake text: {@link invisibleIn}.
 * Pure: no node:* import.
 */

/**
 * Options for every YAML text jobdeck writes from a value (a command's or an object spec's stored
 * YAML, a masked or re-run copy): no line folding. The `yaml` library folds a long scalar at a
 * UTF-16 index, which can cut a surrogate pair (any character outside the BMP) into two lone
 * surrogates — text PostgreSQL cannot store and the spec refuses when it comes back.
 */
export const YAML_WRITE = { lineWidth: 0 } as const;

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

/**
 * Characters a name may not hold, one Unicode-defined rule: the general categories Cc (controls:
 * newline, tab, escape), Cf (format: zero-width, bidi overrides and isolates, soft hyphen, the
 * Arabic letter mark, tags, interlinear annotation), Co (private use: no agreed glyph), Cs (lone
 * surrogates), Zl and Zp (line and paragraph separators); every Default_Ignorable_Code_Point
 * (rendered as nothing: combining grapheme joiner, variation selectors, Hangul fillers…); and the
 * Hangul fillers by name, U+115F U+1160 U+3164 U+FFA0, which render as blank space.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u115F\u1160\u3164\uFFA0]/u;

const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

/** `s` with every character a name may not hold (see INVISIBLE) replaced by `by`. */
export function replaceInvisible(s: string, by: string): string {
  return s.replace(INVISIBLE_ALL, by);
}

/**
 * `s` cut to at most `max` characters (code points, so a surrogate pair is never split), the
 * last one an ellipsis when cut.
 */
export function cutText(s: string, max: number): string {
  const chars = [...s];
  return chars.length > max ? `${chars.slice(0, max - 1).join('').trimEnd()}…` : s;
}

/** The first character of `s` a name may not hold (see INVISIBLE) as `U+XXXX`, or null. */
export function invisibleIn(s: string): string | null {
  const m = INVISIBLE.exec(s);
  return m ? `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : null;
}

/** UTF-8 length without allocating (the limits count bytes). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
