/**
 * Secret-looking env values: which names count as secret, and how their values are masked when
 * jobdeck shows a job (REST API, dashboard, CLI — the latter two read the API). The job itself
 * always receives the real value; masking only changes what is displayed.
 *
 * Browser-safe (no Node imports): the dashboard may call isSecretName() to decide how to draw a
 * value it is editing.
 */

/** What a masked value is replaced with (the same string lib/api/types.ts documents). */
export const MASKED_VALUE = '••••••';

/**
 * Words that make a name secret when a word of the name IS one of them or ENDS with one
 * (`GITHUB_TOKEN`, `GHTOKEN`, `apiKey`, `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, `NPM_AUTH`…). Word boundaries are `_`, `-`, `.`, digits and
 * camelCase humps, so `TOKENIZERS_PARALLELISM` (HuggingFace) and `KEYBOARD` stay visible.
 */
const SECRET_SUFFIXES = [
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'PWD',
  'KEY',
  'APIKEY',
  'CREDENTIAL',
  'CRED',
  'AUTH',
  'AUTHORIZATION',
  'COOKIE',
  'SESSION',
  'PRIVATE',
  'SIGNATURE',
  'DSN',
  'CERT',
];
/** Whole words that are secret only when exact (as suffixes they would catch BYPASS, COMPASS). */
const SECRET_WORDS = new Set(['PASS', 'PW', 'PIN', 'OTP', 'SALT', 'JWT', 'BEARER', 'PAT']);
/** Names that match a rule above but are well-known non-secrets. */
const NOT_SECRET = new Set(['PWD', 'OLDPWD']);

const suffixRe = new RegExp(`(?:${SECRET_SUFFIXES.join('|')})S?$`);

/** Splits an env name into upper-case words: `githubApiToken_2` → GITHUB, API, TOKEN. */
function words(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z]+/)
    .filter(Boolean);
}

/**
 * True when an env name looks like it holds a secret: one of its words is or ends with TOKEN,
 * SECRET, PASSWORD, PASSWD, PASSPHRASE, PWD, KEY, APIKEY, CREDENTIAL(S), CRED(S), AUTH,
 * AUTHORIZATION, COOKIE, SESSION, PRIVATE, SIGNATURE, DSN or CERT (plurals too), or is exactly PASS,
 * PW, PIN, OTP, SALT, JWT, BEARER or PAT (a personal access token: `GITHUB_PAT`). `PWD` and `OLDPWD` themselves (directories) are not secret.
 * Case-insensitive. Errs on the side of masking: a false positive only hides a value from view.
 */
export function isSecretName(name: string): boolean {
  if (NOT_SECRET.has(name.toUpperCase())) return false;
  return words(name).some((w) => SECRET_WORDS.has(w) || suffixRe.test(w));
}

/** `scheme://user:password@host…` — a credential inside a URL-looking value. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)([^\s@/]+)(@)/gi;

/**
 * Masks a value that is not secret by name but carries a password inside a URL
 * (`DATABASE_URL=postgresql://jobdeck:hunter2@db/x` → `postgresql://jobdeck:••••••@db/x`).
 */
export function maskUrlPasswords(value: string): string {
  return value.replace(URL_PASSWORD, `$1${MASKED_VALUE}$3`);
}

/**
 * Returns a copy of `envs` fit for display: values of secret-looking names (isSecretName) are
 * replaced by MASKED_VALUE, and passwords inside URL values are masked. Keys and their order are
 * kept; the input is not changed. Call it wherever a job's envs leave the server (API answers,
 * the submitted spec echoed back) — never on what is passed to the process.
 */
export function maskEnvs(envs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(envs)) {
    out[k] = isSecretName(k) ? MASKED_VALUE : typeof v === 'string' ? maskUrlPasswords(v) : v;
  }
  return out;
}
