'use client';

import { type FormEvent, useState } from 'react';
import styles from './auth.module.css';
import { postLogin } from './post-login';

/** Props of the login form. */
export interface LoginFormProps {
  /** Where to go after logging in (a same-site path; the server re-checks it). */
  next: string;
  /** An error to show at first (e.g. from `?error=invalid`). */
  initialError?: string | null;
  /** What a token looks like here: `jdp_…` (personal tokens, when users log in) or `jd_…` (the admin token). */
  placeholder?: string;
  /** Focus the field at once (the form the page leads with). */
  autoFocus?: boolean;
}

/**
 * Paste-the-token login form. Without JavaScript it is a plain HTML form POST to
 * /api/auth/login (the server answers 303); with it, it posts JSON and shows errors inline.
 */
export function LoginForm({ next, initialError = null, placeholder = 'jd_…', autoFocus = true }: LoginFormProps) {
  const [token, setToken] = useState('');
  const [show, setShow] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(initialError);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!token.trim()) {
      setError('Paste the token first.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const failed = await postLogin({ token: token.trim(), next }, 'That token is not valid for this server.');
      if (failed) setError(failed);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form method="post" action="/api/auth/login" onSubmit={(e) => void onSubmit(e)} data-testid="login-form" noValidate>
      {error ? (
        <p className={styles.error} role="alert" data-testid="login-error">
          {error}
        </p>
      ) : null}
      {/* Lets password managers store the token under a stable name. */}
      <input type="text" name="username" value="jobdeck" autoComplete="username" readOnly hidden />
      <input type="hidden" name="next" value={next} />
      <label className={styles.label} htmlFor="jobdeck-token">
        Access token
      </label>
      <div className={styles.field}>
        <input
          id="jobdeck-token"
          className={styles.input}
          name="token"
          type={show ? 'text' : 'password'}
          autoComplete="current-password"
          autoFocus={autoFocus}
          spellCheck={false}
          placeholder={placeholder}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          data-testid="login-token"
        />
        <button type="button" className={styles.toggle} onClick={() => setShow((s) => !s)} aria-pressed={show}>
          {show ? 'Hide' : 'Show'}
        </button>
      </div>
      <button type="submit" className={styles.submit} disabled={busy} data-testid="login-submit">
        {busy ? 'Logging in…' : 'Log in'}
      </button>
    </form>
  );
}
