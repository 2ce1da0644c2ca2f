// A real OpenID Connect provider (the oidc-provider package) for the single sign-on tests, run
// as its own process: `node tests/helpers/oidc-provider.mjs`. Settings come from the environment:
//   OIDC_CLIENTS   JSON [{client_id, client_secret, redirect_uris}] (PKCE is required for all)
//   OIDC_ACCOUNTS  JSON {"<username>": {"password": "…", "groups": ["…"]}}
//   OIDC_ISSUER_HOST  the host the issuer names (default 127.0.0.1; another loopback name makes
//                  a provider whose metadata names a different issuer than the URL it is reached at)
// It listens on 127.0.0.1 on a free port and prints one JSON line {"issuer", "url"} when ready.
// Its login page is a plain username + password form; a right password logs in and consents.
//
// Forged ID tokens: `POST /test/id-token?mode=aud|iss|resign|off` switches what its token
// endpoint answers from the next exchange on. `aud` / `iss`: the real ID token with a foreign
// audience / issuer, signed again with the provider's own key (the one its JWKS publishes, fixed
// here so the helper holds it) — a token whose signature verifies and whose claim does not;
// `resign`: signed again unchanged (the control: re-signing alone breaks nothing); `off`: as issued.
import { generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const clients = JSON.parse(process.env.OIDC_CLIENTS ?? '[]');
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS ?? '{}');
const issuerHost = process.env.OIDC_ISSUER_HOST || '127.0.0.1';

/** The provider's signing key: generated per process, published in its JWKS. */
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SIGNING_JWK = { ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };
const FOREIGN = { aud: 'someone-else', iss: 'https://idp.attacker.example' };
/** What the token endpoint does to the ID token (see the header). */
let idTokenMode = 'off';

const b64url = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** The ID token `jwt` with its claims changed as `mode` says, signed again with SIGNING_JWK. */
function forge(jwt, mode) {
  const [head, body] = jwt.split('.');
  const header = JSON.parse(Buffer.from(head, 'base64url').toString());
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
  if (header.alg !== 'RS256' || header.kid !== SIGNING_JWK.kid) throw new Error(`unexpected ID token header ${JSON.stringify(header)}`);
  if (mode === 'aud') claims.aud = FOREIGN.aud;
  if (mode === 'iss') claims.iss = FOREIGN.iss;
  const input = `${b64url(header)}.${b64url(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

function loginPage(uid, error) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Test provider sign-in</title></head><body>
<h1>Test provider sign-in</h1>${error ? `<p role="alert">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form></body></html>`;
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://${issuerHost}:${port}`;
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
    pkce: { required: () => true },
    // The groups claim in the id token itself (not only at userinfo), as most providers do.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['jobdeck-test-provider-cookie-key'] },
    jwks: { keys: [SIGNING_JWK] },
    async findAccount(_ctx, id) {
      if (!accounts[id]) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, preferred_username: id, groups: accounts[id].groups ?? [] }) };
    },
  });
  // Runs around the provider's own routes: the token endpoint's answer is an object here still.
  provider.use(async (ctx, next) => {
    await next();
    if (idTokenMode !== 'off' && ctx.method === 'POST' && ctx.path === '/token' && ctx.status === 200 && typeof ctx.body?.id_token === 'string') {
      ctx.body = { ...ctx.body, id_token: forge(ctx.body.id_token, idTokenMode) };
    }
  });
  const callback = provider.callback();
  server.on('request', async (req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/test/id-token?')) {
      const mode = new URL(req.url, issuer).searchParams.get('mode');
      const ok = ['aud', 'iss', 'resign', 'off'].includes(mode);
      if (ok) idTokenMode = mode;
      res.writeHead(ok ? 204 : 400, { 'content-type': 'text/plain' });
      return res.end(ok ? undefined : 'mode: expected aud, iss, resign or off');
    }
    const m = /^\/interaction\/([^/?]+)(\/login)?/.exec(req.url ?? '');
    if (!m) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (req.method === 'GET' && !m[2]) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(loginPage(details.uid));
      }
      const form = await readForm(req);
      const username = form.get('username') ?? '';
      const account = accounts[username];
      if (!account || account.password !== form.get('password')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(loginPage(details.uid, 'wrong username or password'));
      }
      const grant = new provider.Grant({ accountId: username, clientId: details.params.client_id });
      grant.addOIDCScope(details.params.scope);
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: username }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err?.message ?? err));
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer, url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
