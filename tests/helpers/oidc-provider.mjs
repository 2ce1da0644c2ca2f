// A real OpenID Connect provider (the oidc-provider package) for the single sign-on tests, run
// as its own process: `node tests/helpers/oidc-provider.mjs`. Settings come from the environment:
//   OIDC_CLIENTS   JSON [{client_id, client_secret, redirect_uris}] (PKCE is required for all)
//   OIDC_ACCOUNTS  JSON {"<username>": {"password": "…", "groups": ["…"]}}
//   OIDC_ISSUER_HOST  the host the issuer names (default 127.0.0.1; another loopback name makes
//                  a provider whose metadata names a different issuer than the URL it is reached at)
// It listens on 127.0.0.1 on a free port and prints one JSON line {"issuer", "url"} when ready.
// Its login page is a plain username + password form; a right password logs in and consents.
import http from 'node:http';
import Provider from 'oidc-provider';

const clients = JSON.parse(process.env.OIDC_CLIENTS ?? '[]');
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS ?? '{}');
const issuerHost = process.env.OIDC_ISSUER_HOST || '127.0.0.1';

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
    async findAccount(_ctx, id) {
      if (!accounts[id]) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, preferred_username: id, groups: accounts[id].groups ?? [] }) };
    },
  });
  const callback = provider.callback();
  server.on('request', async (req, res) => {
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
