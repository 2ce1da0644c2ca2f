'use client';
/**
 * A job row's actions behind one "⋯" button (open, and what the viewer may do: re-run, cancel,
 * delete), so the list is not a column of red buttons. A small menu (ARIA menu button): opens on click, closes on Escape, a
 * click outside, a scroll or after an action; the arrow keys move between its items.
 * Destructive items ask once more (ConfirmButton). The menu is placed fixed by the button
 * (below it, or above near the bottom of the window) so the table's scroll box cannot clip it.
 */
import Link from 'next/link';
import { useEffect, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import type { JobSummary } from '@/lib/api/types';
import { canCancel, canDelete } from '@/lib/ui/format';
import type { JobPermissions } from '@/lib/ui/permissions';
import { ConfirmButton } from '../ConfirmButton';

/** What the menu's items do (the page reports the outcome). */
export interface RowActions {
  cancel: (j: JobSummary) => void;
  remove: (j: JobSummary) => void;
  rerun: (j: JobSummary) => void;
}

/** Room the menu needs below its button before it opens upwards instead (px). */
const MENU_ROOM = 180;

/** Where the menu goes: fixed, right-aligned with the button, below it or above it. */
function placeBy(el: HTMLElement | null): CSSProperties {
  if (!el) return {};
  const r = el.getBoundingClientRect();
  const right = Math.max(4, window.innerWidth - r.right);
  return r.bottom + MENU_ROOM > window.innerHeight ? { position: 'fixed', right, bottom: window.innerHeight - r.top + 4, top: 'auto' } : { position: 'fixed', right, top: r.bottom + 4 };
}

/** The row's menu; `may`: what the viewer may do to this job (an item it may not use is not there). */
export function RowMenu({ job, actions, busy, may }: { job: JobSummary; actions: RowActions; busy: boolean; may: JobPermissions }) {
  const [place, setPlace] = useState<CSSProperties | null>(null);
  const open = place !== null;
  const setOpen = (v: boolean | ((o: boolean) => boolean)) => {
    const next = typeof v === 'function' ? v(open) : v;
    setPlace(next ? placeBy(button.current) : null);
  };
  const root = useRef<HTMLSpanElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (!root.current?.contains(e.target as Node)) setPlace(null);
    };
    const shut = () => setPlace(null);
    document.addEventListener('mousedown', away);
    window.addEventListener('scroll', shut, true);
    window.addEventListener('resize', shut);
    // Focus the first item, as a menu button does.
    root.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus({ preventScroll: true });
    return () => {
      document.removeEventListener('mousedown', away);
      window.removeEventListener('scroll', shut, true);
      window.removeEventListener('resize', shut);
    };
  }, [open]);
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const onKey = (e: KeyboardEvent) => {
    const items = [...(root.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') close();
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') items[(at + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  const act = (fn: (j: JobSummary) => void) => () => {
    setOpen(false);
    fn(job);
  };
  return (
    <span className="row-menu" ref={root} onKeyDown={onKey}>
      <button ref={button} type="button" className="btn btn-sm btn-ghost btn-icon" aria-haspopup="menu" aria-expanded={open} aria-label={`Actions for job ${job.id}`} title="Actions" onClick={() => setOpen((o) => !o)}>
        ⋯
      </button>
      {open && (
        <span className="menu" role="menu" aria-label={`Job ${job.id}`} style={place ?? undefined}>
          <Link prefetch={false} role="menuitem" className="menu-item" href={`/jobs/${job.id}`}>
            Open job {job.id}
          </Link>
          {may.rerun && (
            <button type="button" role="menuitem" className="menu-item" onClick={act(actions.rerun)} disabled={busy}>
              Re-run job {job.id}
            </button>
          )}
          {may.cancel && canCancel(job.status) && (
            <ConfirmButton role="menuitem" className="menu-item menu-danger" ariaLabel={`Cancel job ${job.id}`} confirmLabel="Confirm cancel" onConfirm={act(actions.cancel)} disabled={busy}>
              Cancel job {job.id}
            </ConfirmButton>
          )}
          {may.remove && canDelete(job.status) && (
            <ConfirmButton role="menuitem" className="menu-item menu-danger" ariaLabel={`Delete job ${job.id}`} confirmLabel="Confirm delete" onConfirm={act(actions.remove)} disabled={busy}>
              Delete job {job.id}
            </ConfirmButton>
          )}
        </span>
      )}
    </span>
  );
}
