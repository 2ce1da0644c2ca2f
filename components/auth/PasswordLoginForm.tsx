'use client';

import { type FormEvent, useState } from 'react';
import styles from './auth.module.css';
import { postLogin } from './post-login';

/**
 * User name + password login (users an admin gave a password: `jobdeck users create NAME --role
 * ROLE --password-stdin`). Posts JSON to /api/auth/login; wrong credentials and the rate limit
 * (429) are shown inline.
 */
export function PasswordLoginForm({ next, initialError = null, autoFocus = false }: { next: string; initialError?: string | null; autoFocus?: boolean }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(initialError);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!username.trim() || !password) {
      setError('Give your user name and password.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const failed = await postLogin({ username: username.trim(), password, next }, 'That user name or password is not valid.');
      if (failed) setError(failed);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void onSubmit(e)} data-testid="password-login-form" noValidate>
      {error ? (
        <p className={styles.error} role="alert" data-testid="password-login-error">
          {error}
        </p>
      ) : null}
      <label className={styles.label} htmlFor="jobdeck-username">
        User name
      </label>
      <div className={styles.field}>
        <input id="jobdeck-username" className={styles.input} autoFocus={autoFocus} autoComplete="username" spellCheck={false} maxLength={63} value={username} onChange={(e) => setUsername(e.target.value)} data-testid="login-username" />
      </div>
      <label className={styles.label} htmlFor="jobdeck-password">
        Password
      </label>
      <div className={styles.field}>
        <input id="jobdeck-password" className={styles.input} type="password" autoComplete="current-password" maxLength={256} value={password} onChange={(e) => setPassword(e.target.value)} data-testid="login-password" />
      </div>
      <button type="submit" className={styles.submit} disabled={busy} data-testid="password-login-submit">
        {busy ? 'Logging in…' : 'Log in with password'}
      </button>
    </form>
  );
}
