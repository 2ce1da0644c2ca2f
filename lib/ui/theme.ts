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

/**
 * The next choice of the toggle. From 'system' it goes to the theme the system is NOT showing
 * (`systemDark`: prefers-color-scheme is dark), so the first press always changes the colours;
 * then to the other one; then back to 'system'. (A fixed system → light → dark cycle changed
 * nothing on a light system's first press.)
 */
export function nextTheme(t: ThemeChoice, systemDark: boolean): ThemeChoice {
  const opposite = systemDark ? 'light' : 'dark';
  const own = systemDark ? 'dark' : 'light';
  if (t === 'system') return opposite;
  return t === opposite ? own : 'system';
}

/** The theme the page shows for a choice: 'system' resolved by `systemDark`. */
export function shownTheme(t: ThemeChoice, systemDark: boolean): 'light' | 'dark' {
  return t === 'system' ? (systemDark ? 'dark' : 'light') : t;
}

/** True when the system prefers a dark theme (false outside a browser). */
export function systemPrefersDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
}

/** Applies a choice to the page and remembers it for a year. */
export function applyTheme(t: ThemeChoice): void {
  const el = document.documentElement;
  if (t === 'system') delete el.dataset.theme;
  else el.dataset.theme = t;
  document.cookie = `${THEME_COOKIE}=${t}; path=/; max-age=31536000; samesite=lax`;
}

/**
 * Calls `fn` whenever the page's colours may have changed: the toggle set another theme
 * (`<html data-theme>`), or the system's preference changed while the choice is 'system'.
 * What draws on a canvas (the Insights charts) reads its colours again then. Returns the
 * unsubscribe function.
 */
export function onThemeChange(fn: () => void): () => void {
  const mo = new MutationObserver(fn);
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  const mq = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
  mq?.addEventListener('change', fn);
  return () => {
    mo.disconnect();
    mq?.removeEventListener('change', fn);
  };
}
