/**
 * Light/dark theme choice: 'system' follows prefers-color-scheme; 'light'/'dark' are set by the
 * header's toggle and kept in a cookie so the server renders `<html data-theme>` right away
 * (no flash, no inline script). Browser-safe.
 */

export type ThemeChoice = 'system' | 'light' | 'dark';
export const THEME_COOKIE = 'jobdeck-theme';

/** Reads a ThemeChoice from a cookie value (anything else → 'system'). */
export function parseTheme(v: string | undefined | null): ThemeChoice {
  return v === 'light' || v === 'dark' ? v : 'system';
}

/** The next choice of the toggle: system → light → dark → system. */
export function nextTheme(t: ThemeChoice): ThemeChoice {
  return t === 'system' ? 'light' : t === 'light' ? 'dark' : 'system';
}

/** Applies a choice to the page and remembers it for a year. */
export function applyTheme(t: ThemeChoice): void {
  const el = document.documentElement;
  if (t === 'system') delete el.dataset.theme;
  else el.dataset.theme = t;
  document.cookie = `${THEME_COOKIE}=${t}; path=/; max-age=31536000; samesite=lax`;
}
