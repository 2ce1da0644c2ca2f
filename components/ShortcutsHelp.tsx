'use client';
/** The `?` dialog: the page's keyboard shortcuts, closed by Escape, its button or a click outside. */
import { useEffect, useRef } from 'react';
import type { Shortcut } from '@/lib/ui/shortcuts';
import { HELP_SHORTCUT } from './useShortcuts';

export function ShortcutsHelp({ open, onClose, shortcuts }: { open: boolean; onClose: () => void; shortcuts: readonly Pick<Shortcut, 'key' | 'description'>[] }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
    // Keys go to the page again, not to the closed dialog's button.
    if (!open && d.contains(document.activeElement)) (document.activeElement as HTMLElement).blur();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="shortcuts"
      aria-labelledby="shortcuts-title"
      data-testid="shortcuts-help"
      // Escape: the cancel event comes before the dialog closes; the focus leaves it now, not at
      // the browser's next rendering update (lib/ui/shortcuts.ts isActivatable).
      onCancel={() => {
        if (ref.current?.contains(document.activeElement)) (document.activeElement as HTMLElement).blur();
      }}
      onClose={() => {
        if (ref.current?.contains(document.activeElement)) (document.activeElement as HTMLElement).blur();
        onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) onClose();
      }}
    >
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {[...shortcuts, HELP_SHORTCUT].map((s) => (
          <div key={s.key}>
            <dt>
              <kbd>{s.key}</kbd>
            </dt>
            <dd>{s.description}</dd>
          </div>
        ))}
      </dl>
      <button type="button" className="btn btn-sm" onClick={onClose}>
        Close
      </button>
    </dialog>
  );
}
