import { describe, expect, it } from 'vitest';
import { MASKED_VALUE, isSecretName, maskEnvs, maskUrlPasswords } from '../../lib/auth/secrets';

describe('isSecretName', () => {
  it.each([
    'TOKEN',
    'GITHUB_TOKEN',
    'GHTOKEN',
    'HF_TOKEN',
    'githubToken',
    'api_key',
    'apiKey',
    'OPENAI_API_KEY',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_ACCESS_KEY_ID',
    'DB_PASSWORD',
    'MYSQL_PWD',
    'PGPASSWORD',
    'SMTP_PASSWD',
    'DB_PASS',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'DOCKER_CREDS',
    'NPM_AUTH',
    'OAUTH_CLIENT_SECRET',
    'AUTHORIZATION',
    'SESSION_COOKIE',
    'SSH_PRIVATE_KEY',
    'SENTRY_DSN',
    'JWT',
    'SSH_KEYS',
    'secret',
    'my-secret-value',
    'WANDB_API_KEY2',
    'GITHUB_PAT',
    'GITLAB_PAT',
  ])('%s is secret', (name) => expect(isSecretName(name)).toBe(true));

  it.each(['PATH', 'HOME', 'PWD', 'OLDPWD', 'TOKENIZERS_PARALLELISM', 'KEYBOARD_LAYOUT', 'AUTHOR', 'BYPASS_CACHE', 'CUDA_VISIBLE_DEVICES', 'EPOCHS', 'LR', 'PASSES', 'COMPASS_DIR', 'PATH_PREFIX', 'PATIENCE'])(
    '%s is not secret',
    (name) => expect(isSecretName(name)).toBe(false),
  );
});

describe('maskEnvs', () => {
  it('masks secret-looking values, keeps the rest, keeps keys and order, leaves the input alone', () => {
    const input = { EPOCHS: '3', HF_TOKEN: 'hf_abc', DB_PASSWORD: 'hunter2', DATABASE_URL: 'postgresql://u:hunter2@db:5432/x', NOTE: 'plain' };
    const copy = { ...input };
    const out = maskEnvs(input);
    expect(out).toEqual({ EPOCHS: '3', HF_TOKEN: MASKED_VALUE, DB_PASSWORD: MASKED_VALUE, DATABASE_URL: `postgresql://u:${MASKED_VALUE}@db:5432/x`, NOTE: 'plain' });
    expect(Object.keys(out)).toEqual(Object.keys(input));
    expect(input).toEqual(copy);
    expect(JSON.stringify(out)).not.toContain('hunter2');
    expect(JSON.stringify(out)).not.toContain('hf_abc');
  });

  it('masks even an empty secret value (no hint about its length)', () => {
    expect(maskEnvs({ API_KEY: '' })).toEqual({ API_KEY: MASKED_VALUE });
  });
});

describe('maskUrlPasswords', () => {
  it('masks the password of URLs inside a value, not the user or host', () => {
    expect(maskUrlPasswords('redis://:s3cret@cache:6379/0 and https://a:b@x.y/z')).toBe(`redis://:${MASKED_VALUE}@cache:6379/0 and https://a:${MASKED_VALUE}@x.y/z`);
    expect(maskUrlPasswords('https://example.com/a:b@c')).toBe('https://example.com/a:b@c');
    expect(maskUrlPasswords('no url here')).toBe('no url here');
  });
});
