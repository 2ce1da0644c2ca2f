import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthConfigError, assertSafeBinding, isLoopbackHost } from '../../lib/auth/binding';
import { loadAuth } from '../../lib/auth/state';
import { constantTimeEqual, generateToken, hashToken, readLocalToken, verifyToken } from '../../lib/auth/tokens';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-auth-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('constant-time comparison', () => {
  it('is equality for any lengths, without throwing on length mismatch', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('', 'x'.repeat(10_000))).toBe(false);
    expect(constantTimeEqual(Buffer.from('tok'), 'tok')).toBe(true);
  });

  it('verifyToken compares the sha256 of the presented token with the stored hash', () => {
    const t = generateToken();
    const h = hashToken(t);
    expect(h).toHaveLength(32);
    expect(verifyToken(t, h)).toBe(true);
    expect(verifyToken(`${t}x`, h)).toBe(false);
    expect(verifyToken(t.slice(0, -1), h)).toBe(false);
    expect(verifyToken('', h)).toBe(false);
    expect(verifyToken(null, h)).toBe(false);
    expect(verifyToken(t, null)).toBe(false);
    expect(verifyToken(t, Buffer.alloc(16))).toBe(false);
  });

  it('generates distinct 256-bit tokens', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^jd_[A-Za-z0-9_-]{43}$/);
  });
});

describe('token files', () => {
  it('first load generates a 0600 token file and a hash file; the server keeps only the hash', () => {
    const home = path.join(tmp(), 'home');
    const r = loadAuth({ home, env: {}, generate: true });
    expect(r.generated).toBe(true);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const tokenFile = path.join(home, 'token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(home, 'token.sha256')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(home, 'session.key')).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(r.loginToken).toBe(token);
    const hashHex = readFileSync(path.join(home, 'token.sha256'), 'utf8').trim();
    expect(hashHex).toBe(createHash('sha256').update(token).digest('hex'));
    expect(token).not.toBe(hashHex);
    expect(r.state.tokenHash!.toString('hex')).toBe(hashHex);
    expect(JSON.stringify(r.state)).not.toContain(token);
    expect(readLocalToken(home)).toBe(token);

    // Second load: same token, nothing generated.
    const r2 = loadAuth({ home, env: {}, generate: true });
    expect(r2.generated).toBe(false);
    expect(r2.state.tokenHash!.equals(r.state.tokenHash!)).toBe(true);
    expect(r2.state.cookieName).toBe(r.state.cookieName);
  });

  it('JOBDECK_TOKEN wins and nothing is written', () => {
    const home = tmp();
    const token = 'explicit-token-0123456789';
    const r = loadAuth({ home, env: { JOBDECK_TOKEN: token }, generate: true });
    expect(r.generated).toBe(false);
    expect(r.state.source).toBe('env');
    expect(r.loginToken).toBeNull();
    expect(verifyToken(token, r.state.tokenHash)).toBe(true);
    expect(readLocalToken(home)).toBeNull();
  });

  it('refuses a short JOBDECK_TOKEN', () => {
    expect(() => loadAuth({ home: tmp(), env: { JOBDECK_TOKEN: 'short' } })).toThrow(AuthConfigError);
  });

  it('JOBDECK_METRICS_TOKEN: kept as a hash apart from the admin token; a short one is refused naming it', () => {
    const metrics = 'metrics-token-0123456789';
    const r = loadAuth({ home: tmp(), env: { JOBDECK_TOKEN: 'explicit-token-0123456789', JOBDECK_METRICS_TOKEN: metrics } });
    expect(verifyToken(metrics, r.state.metricsTokenHash ?? null)).toBe(true);
    expect(verifyToken(metrics, r.state.tokenHash)).toBe(false);
    expect(JSON.stringify(r.state)).not.toContain(metrics);
    expect(loadAuth({ home: tmp(), env: { JOBDECK_TOKEN: 'explicit-token-0123456789' } }).state.metricsTokenHash).toBeNull();
    expect(() => loadAuth({ home: tmp(), env: { JOBDECK_METRICS_TOKEN: 'short' } })).toThrow(/JOBDECK_METRICS_TOKEN/);
  });

  it('keeps working from the hash when the plain file was deleted, and picks up a rotated token file', () => {
    const home = tmp();
    const first = loadAuth({ home, env: {}, generate: true });
    rmSync(path.join(home, 'token'));
    const fromHash = loadAuth({ home, env: {}, generate: true });
    expect(fromHash.generated).toBe(false);
    expect(fromHash.loginToken).toBeNull();
    expect(fromHash.state.tokenHash!.equals(first.state.tokenHash!)).toBe(true);
    expect(readLocalToken(home)).toBeNull();

    const rotated = generateToken();
    writeFileSync(path.join(home, 'token'), `${rotated}\n`, { mode: 0o644 });
    const r = loadAuth({ home, env: {}, generate: true });
    expect(verifyToken(rotated, r.state.tokenHash)).toBe(true);
    expect(verifyToken(first.loginToken!, r.state.tokenHash)).toBe(false);
    expect(statSync(path.join(home, 'token')).mode & 0o777).toBe(0o600);
    expect(r.state.sessionKey.equals(first.state.sessionKey)).toBe(false);
  });

  it('without a token and without generate, nothing authenticates', () => {
    const r = loadAuth({ home: tmp(), env: {}, generate: false });
    expect(r.state.tokenHash).toBeNull();
    expect(r.state.source).toBe('none');
  });

  it('readLocalToken returns null when there is no file', () => {
    expect(readLocalToken(path.join(tmp(), 'nothing-here'))).toBeNull();
  });
});

describe('binding policy', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', 'app.localhost', '::1', '[::1]', '::ffff:127.0.0.1'])('%s is loopback', (h) => expect(isLoopbackHost(h)).toBe(true));
  it.each(['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', '::ffff:10.0.0.1', '128.0.0.1'])('%s is not loopback', (h) => expect(isLoopbackHost(h)).toBe(false));

  it('refuses a non-loopback address without JOBDECK_TOKEN, with a message that says what to do', () => {
    expect(() => assertSafeBinding('0.0.0.0', {})).toThrow(/JOBDECK_TOKEN/);
    expect(() => assertSafeBinding('::', { JOBDECK_TOKEN: '   ' })).toThrow(AuthConfigError);
    expect(() => assertSafeBinding('0.0.0.0', { JOBDECK_TOKEN: 'x'.repeat(32) })).not.toThrow();
    expect(() => assertSafeBinding('127.0.0.1', {})).not.toThrow();
  });
});
