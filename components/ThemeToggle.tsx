'use client';
/** Cycles the theme: system → light → dark (remembered in a cookie; see lib/ui/theme.ts). */
import { useState } from 'react';
import { applyTheme, nextTheme, type ThemeChoice } from '@/lib/ui/theme';

const ICON: Record<ThemeChoice, string> = { system: '◐', light: '☀', dark: '☾' };

export function ThemeToggle({ initial }: { initial: ThemeChoice }) {
  const [theme, setTheme] = useState<ThemeChoice>(initial);
  const next = nextTheme(theme);
  return (
    <button
      type="button"
      className="btn btn-ghost btn-icon"
      aria-label={`Theme: ${theme}. Switch to ${next}`}
      title={`Theme: ${theme} (click for ${next})`}
      onClick={() => {
        applyTheme(next);
        setTheme(next);
      }}
    >
      <span aria-hidden="true">{ICON[theme]}</span>
    </button>
  );
}
