'use client';

import { type FormEvent, useState } from 'react';
import { leavingForLogin, LOGIN_PATH } from '@/lib/ui/api';
import styles from './auth.module.css';

/** Props of LogoutButton. */
export interface LogoutButtonProps {
  /** Extra class for the button (the dashboard's own look); default: a small outlined button. */
  className?: string;
  label?: string;
}

/**
 * Logs out: POST /api/auth/logout (the session is revoked server-side and the cookie cleared),
 * then goes to /login. Works without JavaScript too (a plain form post; the server answers 303).
 * Place it anywhere in the dashboard's header.
 */
export function LogoutButton({ className, label = 'Log out' }: LogoutButtonProps) {
  const [busy, setBusy] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setBusy(true);
    // From here the page is leaving for the login page: a 401 of a poll meanwhile must not redirect it elsewhere.
    leavingForLogin();
    try {
      await fetch('/api/auth/logout', { method: 'POST', headers: { accept: 'application/json' }, credentials: 'same-origin' });
    } catch {
      // An unreachable server: the login page is next all the same.
    } finally {
      // Whatever the answer (an expired session is already logged out), the login page is next.
      window.location.assign(LOGIN_PATH);
    }
  }

  return (
    <form method="post" action="/api/auth/logout" onSubmit={(e) => void onSubmit(e)} className={styles.logoutForm}>
      <button type="submit" className={className ?? styles.logout} disabled={busy} data-testid="logout">
        {busy ? 'Logging out…' : label}
      </button>
    </form>
  );
}

export default LogoutButton;
