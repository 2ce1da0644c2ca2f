/**
 * The theme toggle's order (lib/ui/theme.ts: its first press always changes the colours) and
 * where the end of a long log starts and when the whole log may take over (lib/ui/tail-preview.ts).
 */
import { describe, expect, it } from 'vitest';
import { caughtUp, PREVIEW_TAIL_BYTES, previewStart } from '../../lib/ui/tail-preview';
import { nextTheme, shownTheme, type ThemeChoice } from '../../lib/ui/theme';

describe('nextTheme', () => {
  it('goes from Auto to the theme the system is not showing, then the other, then back', () => {
    for (const systemDark of [false, true]) {
      let t: ThemeChoice = 'system';
      const shown: string[] = [shownTheme(t, systemDark)];
      const seen: ThemeChoice[] = [];
      for (let i = 0; i < 3; i++) {
        t = nextTheme(t, systemDark);
        seen.push(t);
        shown.push(shownTheme(t, systemDark));
      }
      expect(seen).toEqual(systemDark ? ['light', 'dark', 'system'] : ['dark', 'light', 'system']);
      // The first press changes what shows.
      expect(shown[1]).not.toBe(shown[0]);
    }
  });
});

describe('tail preview', () => {
  it('starts the last PREVIEW_TAIL_BYTES of a log longer than that, and not for a shorter one', () => {
    expect(previewStart({ task: 1, attempt: 2, size: 10_000_000 })).toEqual({ task: 1, attempt: 2, offset: 10_000_000 - PREVIEW_TAIL_BYTES });
    expect(previewStart({ task: 0, attempt: 1, size: PREVIEW_TAIL_BYTES })).toBeNull();
  });

  it('lets the whole log take over once it has every byte the end has', () => {
    const end = { task: 1, attempt: 2, offset: 5000 };
    expect(caughtUp({ task: 1, attempt: 2, offset: 4999 }, end)).toBe(false);
    expect(caughtUp({ task: 1, attempt: 2, offset: 5000 }, end)).toBe(true);
    expect(caughtUp({ task: 1, attempt: 1, offset: 9e9 }, end)).toBe(false);
    expect(caughtUp({ task: 1, attempt: 3, offset: 0 }, end)).toBe(true);
    expect(caughtUp({ task: 2, attempt: 1, offset: 0 }, end)).toBe(true);
  });
});
