import type { Metadata } from 'next';
import { LoginForm } from '@/components/auth/LoginForm';
import { PasswordLoginForm } from '@/components/auth/PasswordLoginForm';
import styles from '@/components/auth/auth.module.css';
import { safeNextPath } from '@/lib/auth/origin';
import { OIDC_START_PATH } from '@/lib/auth/oidc-config';
import { startedServices } from '@/lib/server/services';

export const metadata: Metadata = { title: 'Log in · jobdeck', referrer: 'no-referrer' };
export const dynamic = 'force-dynamic';

const ERRORS: Record<string, string> = {
  invalid: 'That token is not valid for this server.',
  expired: 'Your session has ended. Log in again.',
  sso: 'Single sign-on did not complete. Try again; an admin finds the reason in the audit log.',
};

/** Where the admin token is, for the page that leads with it. */
function TokenHelp() {
  return (
    <div className={styles.help}>
      Where is the token?
      <ul>
        <li>
          In the server log at start: open the <code>/login?token=…</code> URL it printed.
        </li>
        <li>
          In the file <code>$JOBDECK_HOME/token</code> (default <code>~/.jobdeck/token</code>) on the server machine.
        </li>
        <li>
          Or the value of <code>JOBDECK_TOKEN</code> the server was started with.
        </li>
      </ul>
    </div>
  );
}

/**
 * The login page. When users log in with passwords (an admin gave one a password), it leads with
 * the user name and password form, and a token — a personal one (`jdp_…`), or the admin token — is
 * the second way, one click away. Otherwise (one person, the admin token) it leads with the token
 * and says where to find it. (`/login?token=…` — the URL printed at start — never renders this
 * page: the server logs in and redirects first.) With single sign-on configured (JOBDECK_OIDC_*),
 * a "Sign in with <provider>" link comes first.
 */
export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const next = safeNextPath(one(sp.next));
  const error = ERRORS[one(sp.error) ?? ''] ?? null;
  const auth = startedServices()?.auth;
  const sso = auth?.oidc ?? null;
  const users = auth?.directory.hasPasswordUsers() ?? false;
  return (
    <main className={styles.page}>
      <section className={styles.card} aria-labelledby="login-title">
        <div className={styles.brand}>
          <span className={styles.logo} aria-hidden="true" />
          <h1 id="login-title" className={styles.title}>
            Log in to jobdeck
          </h1>
        </div>
        <p className={styles.lead}>{users ? 'Log in with your user name and password.' : 'This server runs commands for whoever holds its token. Paste it to continue.'}</p>
        {sso && (
          <p>
            <a className={styles.sso} data-testid="sso-login" href={`${OIDC_START_PATH}?${new URLSearchParams({ next })}`}>
              Sign in with {sso.label}
            </a>
          </p>
        )}
        {users ? (
          <>
            <div data-testid="password-login">
              <PasswordLoginForm next={next} initialError={error} autoFocus />
            </div>
            <details className={styles.help} data-testid="token-login">
              <summary>Log in with an access token instead</summary>
              <p>
                A personal token (<code>jdp_…</code>, from the Tokens page or <code>jobdeck tokens create</code>), or the admin token.
              </p>
              <LoginForm next={next} placeholder="jdp_…" autoFocus={false} />
            </details>
          </>
        ) : (
          <>
            <LoginForm next={next} initialError={error} />
            <TokenHelp />
          </>
        )}
      </section>
    </main>
  );
}
