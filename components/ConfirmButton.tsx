'use client';
/**
 * A button that asks once more before a destructive action: the first click arms it ("Confirm
 * delete?") for a few seconds, the second click acts. Keyboard- and screen-reader-friendly
 * (no modal; the label change is announced).
 */
import { useEffect, useState, type ReactNode } from 'react';

export function ConfirmButton({
  children,
  confirmLabel,
  onConfirm,
  className = 'btn',
  disabled,
  ariaLabel,
  armedMs = 4000,
  role,
}: {
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  className?: string;
  disabled?: boolean;
  ariaLabel?: string;
  armedMs?: number;
  /** `menuitem` inside a menu. */
  role?: 'menuitem';
}) {
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    if (!armed) return;
    const t = setTimeout(() => setArmed(false), armedMs);
    return () => clearTimeout(t);
  }, [armed, armedMs]);
  return (
    <button
      type="button"
      role={role}
      className={`${className}${armed ? ' btn-armed' : ''}`}
      disabled={disabled}
      aria-label={armed ? confirmLabel : ariaLabel}
      aria-live="polite"
      onClick={() => {
        if (armed) {
          setArmed(false);
          onConfirm();
        } else setArmed(true);
      }}
      onBlur={() => setArmed(false)}
    >
      {armed ? confirmLabel : children}
    </button>
  );
}
