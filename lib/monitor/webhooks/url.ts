/**
 * Where a webhook may be sent (SSRF, docs/design.md §10 "Webhooks"): http(s) URLs only, and only
 * to public unicast addresses — loopback, private, link-local, CGNAT, multicast, unspecified,
 * reserved and documentation ranges (IPv4 and IPv6, an IPv4-mapped IPv6 address judged as its
 * IPv4 address) are refused unless private addresses are allowed. The check runs on the address
 * the name RESOLVES to, at create and again at every send, and the send connects to exactly the
 * address checked (a name that resolves to a public address once and a private one the next time
 * — DNS rebinding — gains nothing). Ranges come from ipaddr.js (IANA special-purpose registries).
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** Longest URL a subscription may have. */
export const MAX_WEBHOOK_URL = 2048;

/** A URL refused, with a message that says why (shown to the user as is). */
export class WebhookUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookUrlError';
  }
}

/** An address checked for sending: where to connect. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The URL's shape: parsed, http or https, ≤ 2,048 characters, a host, no user name or password.
 * @throws WebhookUrlError naming what is wrong.
 */
export function parseWebhookUrl(raw: string): URL {
  if (raw.length > MAX_WEBHOOK_URL) throw new WebhookUrlError(`url: longer than ${MAX_WEBHOOK_URL} characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new WebhookUrlError('url: not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new WebhookUrlError(`url: only http and https are allowed, not ${u.protocol.replace(/:$/, '')}`);
  if (!u.hostname) throw new WebhookUrlError('url: no host');
  if (u.username || u.password) throw new WebhookUrlError('url: must not carry a user name or password (the request is signed instead)');
  return u;
}

/**
 * The range an address is in ("unicast" for a public one). An IPv6 address that carries an IPv4
 * address in its last 32 bits and reaches it — IPv4-mapped (`::ffff:a.b.c.d`) or the deprecated
 * IPv4-compatible form (`::a.b.c.d`, RFC 4291 §2.5.5.1, which ipaddr.js files as plain unicast)
 * — is judged as that IPv4 address: `[::127.0.0.1]` is loopback.
 */
export function addressRange(address: string): string {
  let a = ipaddr.parse(address);
  if (a.kind() === 'ipv6') {
    const v6 = a as ipaddr.IPv6;
    const compatible = v6.parts.slice(0, 6).every((p) => p === 0) && v6.range() === 'unicast';
    if (v6.isIPv4MappedAddress()) a = v6.toIPv4Address();
    else if (compatible) a = ipaddr.fromByteArray(v6.toByteArray().slice(12));
  }
  return a.range();
}

/**
 * Checks one address. @throws WebhookUrlError when it is not a public unicast address and
 * private addresses are not allowed.
 */
export function checkAddress(host: string, address: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const range = addressRange(address);
  if (range !== 'unicast') {
    const what = host === address ? `${host} is an address` : `${host} resolves to ${address}, an address`;
    throw new WebhookUrlError(`url: ${what} in a ${range} range, which webhooks may not reach (JOBDECK_WEBHOOK_ALLOW_PRIVATE=1 allows it)`);
  }
}

/**
 * Resolves the URL's host and checks every address it resolves to (all of them: a name must not
 * hide a private address among public ones); answers the first, to connect to.
 * @throws WebhookUrlError when the host does not resolve or an address is refused.
 */
export async function resolveWebhookHost(u: URL, allowPrivate: boolean): Promise<CheckedAddress> {
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.isValid(host)) {
    checkAddress(host, host, allowPrivate);
    return { address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 };
  }
  let found: Array<{ address: string; family: number }>;
  try {
    found = await lookup(host, { all: true, verbatim: true });
  } catch (err) {
    throw new WebhookUrlError(`url: cannot resolve ${host} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (found.length === 0) throw new WebhookUrlError(`url: ${host} resolves to no address`);
  for (const f of found) checkAddress(host, f.address, allowPrivate);
  return { address: found[0].address, family: found[0].family === 6 ? 6 : 4 };
}

/**
 * The whole check of a subscription's URL (at create and at send).
 * @throws WebhookUrlError naming what is wrong.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<{ url: URL; address: CheckedAddress }> {
  const url = parseWebhookUrl(raw);
  return { url, address: await resolveWebhookHost(url, allowPrivate) };
}
