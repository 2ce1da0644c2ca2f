'use client';
/**
 * Binds single-key shortcuts (lib/ui/shortcuts.ts) to the document while mounted, plus `?`
 * which opens the list of them (components/ShortcutsHelp.tsx). Answers the help's open state.
 */
import { useEffect, useRef, useState } from 'react';
import { matchShortcut, type Shortcut } from '@/lib/ui/shortcuts';

/** The `?` shortcut's entry in the help. */
export const HELP_SHORTCUT = { key: '?', description: 'Show these shortcuts' } as const;

export function useShortcuts(shortcuts: readonly Shortcut[]): { helpOpen: boolean; setHelpOpen: (open: boolean) => void } {
  const [helpOpen, setHelpOpen] = useState(false);
  // The latest list without re-binding the listener on every render.
  const ref = useRef(shortcuts);
  ref.current = shortcuts;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const all: Shortcut[] = [...ref.current, { ...HELP_SHORTCUT, run: () => setHelpOpen((o) => !o) }];
      const s = matchShortcut(e, all);
      if (!s) return;
      e.preventDefault();
      s.run();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return { helpOpen, setHelpOpen };
}
