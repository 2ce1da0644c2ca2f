/**
 * `jobdeck webhooks list|add|rm|enable|disable|rotate|deliveries|test|redeliver`: signed webhook
 * subscriptions on job events (the /api/webhooks routes; docs/design.md §10 "Webhooks"). `add` and
 * `rotate` print the signing secret — the only time it is shown.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { DeliveryView, WebhookView } from '../../api/types';
import { usageError } from '../errors';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { PLAIN_CHARS } from './manage';

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const EVENTS = ['job.succeeded', 'job.failed', 'job.cancelled', 'job.started', 'task.restarted', 'task.recovered', '*'];

function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, chars: PLAIN_CHARS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true } });
  for (const r of rows) t.push(r);
  return t.toString().split('\n').map((l) => l.replace(/\s+$/, '')).join('\n');
}

/** The `jobdeck webhooks` table. */
export function renderWebhooks(ws: readonly WebhookView[]): string {
  return table(
    ['NAME', 'ENABLED', 'FORMAT', 'EVENTS', 'URL'],
    ws.map((w) => [w.name, w.enabled ? 'yes' : `no${w.disabledReason ? ` (${w.disabledReason})` : ''}`, w.format, w.events.join(','), w.url]),
  );
}

/** An ISO time to the second, UTC (`2026-12-01T08:00:03Z`); "-" for none. */
function second(iso: string | null): string {
  return iso ? `${iso.slice(0, 19)}Z` : '-';
}

/** The `jobdeck webhooks deliveries` table: TIME is when the event was queued (UTC). */
export function renderDeliveries(ds: readonly DeliveryView[]): string {
  const dash = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  return table(
    ['ID', 'TIME', 'EVENT', 'JOB', 'STATUS', 'TRIES', 'CODE', 'MS', 'NEXT TRY', 'ERROR'],
    ds.map((d) => [d.id, second(d.createdAt), d.eventType, dash(d.jobId), d.status, String(d.attempts), dash(d.lastStatusCode), dash(d.lastLatencyMs), second(d.nextAttemptAt), dash(d.lastError).slice(0, 80)]),
  );
}

function checkName(name: string): string {
  if (!NAME.test(name)) throw usageError(`webhook ${JSON.stringify(name)}: expected 1–63 characters: a–z, 0–9, - and _, starting with a letter or digit`);
  return encodeURIComponent(name);
}

/** Options of `webhooks add`. */
export interface AddOptions {
  events: string;
  format?: string;
  job?: string;
  json?: boolean;
}

type Verb = 'list' | 'add' | 'rm' | 'enable' | 'disable' | 'rotate' | 'deliveries' | 'test' | 'redeliver';

/** The action of every `webhooks` verb. */
export async function webhooksAction(ctx: CliContext, verb: Verb, args: string[], opts: Partial<AddOptions> & { limit?: string }): Promise<number> {
  const client = await ctx.client();
  const print = (v: unknown, text: string) => ctx.out(opts.json ? JSON.stringify(v, null, 2) : text);
  if (verb === 'list') {
    const { webhooks } = await client.request<{ webhooks: WebhookView[] }>('GET', '/api/webhooks', { what: 'webhooks' });
    print(webhooks, renderWebhooks(webhooks));
    return EXIT.OK;
  }
  const name = checkName(args[0] ?? '');
  const what = `webhook ${args[0]}`;
  switch (verb) {
    case 'add': {
      const events = (opts.events ?? '').split(',').map((e) => e.trim()).filter(Boolean);
      const bad = events.find((e) => !EVENTS.includes(e));
      if (!events.length || bad) throw usageError(`--events: ${bad ? `unknown event "${bad}"` : 'give at least one'}; valid events: ${EVENTS.join(', ')}`);
      if (opts.format && !['json', 'slack'].includes(opts.format)) throw usageError('--format: expected json or slack');
      const body = { name: args[0], url: args[1], events, ...(opts.format ? { format: opts.format } : {}), ...(opts.job ? { jobNameGlob: opts.job } : {}) };
      const r = await client.request<{ webhook: WebhookView; secret: string }>('POST', '/api/webhooks', { body, what });
      print(r, `${renderWebhooks([r.webhook])}\n\nSigning secret (shown only now): ${r.secret}`);
      return EXIT.OK;
    }
    case 'rm':
      await client.request('DELETE', `/api/webhooks/${name}`, { what });
      ctx.out(`Webhook ${args[0]} deleted.`);
      return EXIT.OK;
    case 'enable':
    case 'disable': {
      const w = await client.request<WebhookView>('PATCH', `/api/webhooks/${name}`, { body: { enabled: verb === 'enable' }, what });
      print(w, renderWebhooks([w]));
      return EXIT.OK;
    }
    case 'rotate': {
      const r = await client.request<{ webhook: WebhookView; secret: string }>('POST', `/api/webhooks/${name}/rotate`, { what });
      print(r, `New signing secret of ${r.webhook.name} (shown only now; the old one no longer signs): ${r.secret}`);
      return EXIT.OK;
    }
    case 'deliveries': {
      const q = opts.limit ? `?limit=${encodeURIComponent(opts.limit)}` : '';
      const { deliveries } = await client.request<{ deliveries: DeliveryView[] }>('GET', `/api/webhooks/${name}/deliveries${q}`, { what });
      print(deliveries, renderDeliveries(deliveries));
      return EXIT.OK;
    }
    case 'test': {
      const d = await client.request<DeliveryView>('POST', `/api/webhooks/${name}/test`, { what });
      print(d, `Test event queued: ${d.id}`);
      return EXIT.OK;
    }
    case 'redeliver': {
      const id = args[1] ?? '';
      if (!/^msg_[0-9a-f]{32}$/.test(id)) throw usageError(`delivery ${JSON.stringify(id)}: expected msg_ and 32 hex digits (see \`jobdeck webhooks deliveries ${args[0]}\`)`);
      const d = await client.request<DeliveryView>('POST', `/api/webhooks/${name}/deliveries/${id}/redeliver`, { what });
      print(d, `Delivery ${d.id} queued again.`);
      return EXIT.OK;
    }
  }
  return EXIT.OK;
}

/** Adds `webhooks` and its verbs to the program. */
export function addWebhooks(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  const w = program
    .command('webhooks')
    .summary('signed webhooks on job events: list, add, rm, enable, disable, rotate, deliveries, test, redeliver')
    .description('Webhook subscriptions: job events (job.failed, task.restarted, …) POSTed to a URL, signed the Standard Webhooks way.')
    .action(async () => run(() => webhooksAction(ctx(), 'list', [], {})));
  w.command('list').summary('list the subscriptions').description('Every subscription: name, enabled (or why not), format, events, URL.').option('--json', 'print JSON').action(async (o: { json?: boolean }) => run(() => webhooksAction(ctx(), 'list', [], o)));
  w.command('add')
    .summary('add one; prints its secret once')
    .description('Subscribe URL to job events; the answer holds the signing secret, shown this once (`rotate` makes a new one).')
    .argument('<name>', 'subscription name (a–z, 0–9, - and _)')
    .argument('<url>', 'http(s) URL to POST to')
    .requiredOption('--events <list>', `comma-separated: ${EVENTS.join(', ')}`)
    .option('--format <format>', 'json (default) or slack')
    .option('--job <glob>', 'only jobs whose name matches this glob')
    .option('--json', 'print JSON')
    .action(async (name: string, url: string, o: AddOptions) => run(() => webhooksAction(ctx(), 'add', [name, url], o)));
  for (const [verb, summary, description] of [
    ['rm', 'delete one and its delivery log', 'Delete the subscription and its delivery log.'],
    ['enable', 'enable one again', 'Enable the subscription again (clears why it was disabled).'],
    ['disable', 'disable one: no more events', 'Disable the subscription: its events are no longer queued.'],
    ['rotate', 'a new signing secret, printed once', 'Give the subscription a new signing secret, printed this once.'],
    ['test', 'queue a signed test event', 'Queue a signed test event for the subscription (see `deliveries`).'],
  ] as const) {
    w.command(verb).summary(summary).description(description).argument('<name>', 'subscription name').option('--json', 'print JSON').action(async (name: string, o: { json?: boolean }) => run(() => webhooksAction(ctx(), verb, [name], o)));
  }
  w.command('deliveries')
    .summary('its last deliveries, newest first')
    .description('The last deliveries of a subscription, newest first: when the event was queued, its job, status, tries, the last answer (code, ms, error) and when the next try is due.')
    .argument('<name>', 'subscription name')
    .option('--limit <N>', 'how many (1–200, default 50)')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { limit?: string; json?: boolean }) => run(() => webhooksAction(ctx(), 'deliveries', [name], o)));
  w.command('redeliver')
    .summary('send a delivery again, same id')
    .description('Send a delivery again, under the same id (receivers deduplicate on it).')
    .argument('<name>', 'subscription name')
    .argument('<delivery>', 'delivery id (msg_…)')
    .option('--json', 'print JSON')
    .action(async (name: string, id: string, o: { json?: boolean }) => run(() => webhooksAction(ctx(), 'redeliver', [name, id], o)));
}
