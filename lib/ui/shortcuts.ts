/**
 * Single-key keyboard shortcuts of the dashboard pages (`/` search, `j`/`k` move, `f` follow…),
 * the way GitHub and Gmail do them: a plain key, no modifier, never while the user types in a
 * field. Pure matching logic, browser-safe; the React hook is components/useShortcuts.ts.
 */

/** One shortcut: the key as `KeyboardEvent.key` reports it (`/`, `j`, `G`, `Enter`, `?`). */
export interface Shortcut {
  key: string;
  /** What it does, for the `?` help ("Focus the search"). */
  description: string;
  run: () => void;
}

/** The parts of a keyboard event the matcher reads. */
export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** The focused element the key went to. */
  target: EventTarget | null;
  defaultPrevented?: boolean;
  isComposing?: boolean;
}

/** True when the key goes to something the user types in (input, textarea, select, editor). */
export function isTypingTarget(target: EventTarget | null): boolean {
  const el = target as (HTMLElement & { isContentEditable?: boolean }) | null;
  if (!el || typeof el !== 'object' || !('tagName' in el)) return false;
  const tag = String(el.tagName).toUpperCase();
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = String((el as HTMLInputElement).type || 'text').toLowerCase();
    return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(type);
  }
  return !!el.isContentEditable;
}

/**
 * A link or button that Enter activates. Not one inside a `<dialog>` that has just closed: the
 * browser moves the focus out of a closed dialog only at its next rendering update (and the
 * dialog's `close` event comes later still), so a key pressed right after Escape closed the `?`
 * help would otherwise go to its hidden Close button and do nothing.
 */
function isActivatable(target: EventTarget | null): boolean {
  const el = target && typeof target === 'object' && 'tagName' in target ? (target as HTMLElement) : null;
  const tag = el ? String(el.tagName).toUpperCase() : '';
  if (tag !== 'A' && tag !== 'BUTTON' && tag !== 'SUMMARY') return false;
  return !(typeof el?.closest === 'function' && el.closest('dialog:not([open])'));
}

/**
 * The shortcut a key press means, or null: no Ctrl/Meta/Alt (Shift only as part of the key,
 * `G` or `?`), not while typing, not an event a control already handled.
 */
export function matchShortcut(e: KeyLike, shortcuts: readonly Shortcut[]): Shortcut | null {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || e.isComposing) return null;
  if (isTypingTarget(e.target)) return null;
  // Enter on a focused link or button is that control's own (it opens or clicks it).
  if (e.key === 'Enter' && isActivatable(e.target)) return null;
  return shortcuts.find((s) => s.key === e.key) ?? null;
}
