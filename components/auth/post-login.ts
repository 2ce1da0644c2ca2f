/**
 * Posts a login (a token, or a user name and password) to /api/auth/login as JSON and, when it
 * holds, goes to the `next` page the server answers (it re-checks that the path is same-site).
 * @param body the JSON body: `{ token, next }` or `{ username, password, next }`
 * @param invalid the text shown for a 401 (which credentials were wrong)
 * @returns the error to show, or null once the page is leaving
 */
export async function postLogin(body: Record<string, string>, invalid: string): Promise<string | null> {
  try {
    const res = await fetch('/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (res.ok) {
      const answer = (await res.json()) as { next?: string };
      window.location.assign(answer.next || '/');
      return null;
    }
    const problem = (await res.json().catch(() => null)) as { detail?: string } | null;
    return res.status === 401 ? invalid : problem?.detail || `Login failed (HTTP ${res.status}).`;
  } catch {
    return 'Could not reach the server.';
  }
}
