'use client';
/**
 * The theme toggle: shows the choice it holds (Auto — the system's —, Light or Dark) and moves to
 * the next (lib/ui/theme.ts nextTheme: from Auto to the theme the system is not showing, so the
 * first press changes the colours), remembered in a cookie.
 */
import { useState } from 'react';
import { applyTheme, nextTheme, systemPrefersDark, type ThemeChoice } from '@/lib/ui/theme';

const ICON: Record<ThemeChoice, string> = { system: '◐', light: '☀', dark: '☾' };
const LABEL: Record<ThemeChoice, string> = { system: 'Auto', light: 'Light', dark: 'Dark' };

export function ThemeToggle({ initial }: { initial: ThemeChoice }) {
  const [theme, setTheme] = useState<ThemeChoice>(initial);
  return (
    <button
      type="button"
      className="btn btn-ghost btn-sm theme-toggle"
      aria-label={`Theme: ${LABEL[theme]}. Change the theme`}
      title={`Theme: ${LABEL[theme]}${theme === 'system' ? ' (as the system)' : ''} — click to change`}
      data-testid="theme-toggle"
      data-theme-choice={theme}
      onClick={() => {
        const next = nextTheme(theme, systemPrefersDark());
        applyTheme(next);
        setTheme(next);
      }}
    >
      <span aria-hidden="true">{ICON[theme]}</span>
      <span className="theme-label">{LABEL[theme]}</span>
    </button>
  );
}
