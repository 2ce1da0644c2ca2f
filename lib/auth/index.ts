/**
 * jobdeck's security layer (see SECURITY.md). What other parts call:
 *
 * - `readLocalToken(home?)` — the CLI's fallback token: `$JOBDECK_HOME/token` (default
 *   `~/.jobdeck/token`), or null. (Defined in lib/config.ts, where the CLI imports it from.)
 * - `maskEnvs(envs)`, `isSecretName(name)`, `MASKED_VALUE` — for anything that shows a job's envs
 *   (lib/auth/secrets.ts; browser-safe).
 * - `checkRequest(…)` / `authenticate(…)` — used by apiRoute() and the server's gates; routes do
 *   not call them directly.
 *
 * The server wires the rest: prepareServerAuth() at start (binding policy, token, login URL),
 * createHttpGate() before Next.js, gateUpgrade() before every WebSocket route.
 */
export { readLocalToken, tokenPath, TOKEN_FILE, TOKEN_HASH_FILE, constantTimeEqual, verifyToken, hashToken, generateToken } from './tokens';
export { maskEnvs, isSecretName, maskUrlPasswords, MASKED_VALUE } from './secrets';
export { checkRequest, authenticate, bearerToken, type Identity, type Verdict, type HeaderGetter } from './guard';
export { closedAuthState, loadAuth, type AuthState } from './state';
export { isLoopbackHost, assertSafeBinding, AuthConfigError } from './binding';
export { originMatches, hostAllowed, isStateChanging, safeNextPath } from './origin';
export { isPublicRequest, LOGIN_PATH } from './policy';
