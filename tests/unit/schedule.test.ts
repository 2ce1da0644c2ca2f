/**
 * The pure schedule rules (lib/jobs/schedule.ts): the cron check, the time zone, and planFire —
 * on time, the catch-up rule after downtime, the next fire time.
 */
import { describe, expect, it } from 'vitest';
import { cronProblem, nextFireAfter, planFire, scheduleSettingsFromEnv, timezoneProblem } from '../../lib/jobs/schedule';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('schedule rules', () => {
  it('checks cron expressions and time zones, seconds only where allowed', () => {
    expect(cronProblem('0 3 * * *', 'UTC')).toBeNull();
    expect(cronProblem('*/2 * * * * *', 'UTC')).toBe('expected 5 fields (minute hour day month weekday): a seconds field is not allowed on this server');
    expect(cronProblem('*/2 * * * * *', 'UTC', true)).toBeNull();
    expect(cronProblem('* * *', 'UTC')).toMatch(/^not a cron expression: /);
    expect(cronProblem('', 'UTC')).toBe('expected a cron expression of 1–200 characters, e.g. "0 3 * * *"');
    expect(timezoneProblem('Europe/Berlin')).toBeNull();
    expect(timezoneProblem('Nowhere/City')).toBe('"Nowhere/City" is not a time zone this server knows (expected an IANA name such as UTC or Europe/Berlin)');
  });

  it('reads the cron in its time zone', () => {
    // 03:00 in Berlin (UTC+1 in January) is 02:00 UTC.
    expect(iso(nextFireAfter('0 3 * * *', 'Europe/Berlin', at('2027-01-04T12:00:00Z')))).toBe('2027-01-05T02:00:00.000Z');
  });

  it('plans a fire: on time within the grace, the last missed once with catch-up last, none with none', () => {
    const s = { cron: '*/1 * * * *', timezone: 'UTC', nextFireAtMs: at('2027-01-04T10:01:00Z') };
    const onTime = planFire({ ...s, catchUp: 'last' }, at('2027-01-04T10:01:02Z'), 10_000);
    expect([iso(onTime.fireAtMs), onTime.kind, onTime.missed, iso(onTime.nextMs)]).toEqual(['2027-01-04T10:01:00.000Z', 'cron', 0, '2027-01-04T10:02:00.000Z']);
    const late = planFire({ ...s, catchUp: 'last' }, at('2027-01-04T10:05:30Z'), 10_000);
    expect([iso(late.fireAtMs), late.kind, late.missed, iso(late.nextMs)]).toEqual(['2027-01-04T10:05:00.000Z', 'catch_up', 4, '2027-01-04T10:06:00.000Z']);
    const none = planFire({ ...s, catchUp: 'none' }, at('2027-01-04T10:05:30Z'), 10_000);
    expect([none.fireAtMs, none.missed, iso(none.nextMs)]).toEqual([null, 5, '2027-01-04T10:06:00.000Z']);
    // The latest time is on time though earlier ones were missed: it runs, with either rule.
    const recent = planFire({ ...s, catchUp: 'none' }, at('2027-01-04T10:05:03Z'), 10_000);
    expect([iso(recent.fireAtMs), recent.kind, recent.missed]).toEqual(['2027-01-04T10:05:00.000Z', 'cron', 4]);
  });

  it('reads its settings from the environment, naming a bad one', () => {
    expect(scheduleSettingsFromEnv({})).toEqual({ tickMs: 1000, graceMs: 60_000, allowSeconds: false });
    expect(scheduleSettingsFromEnv({ JOBDECK_SCHEDULE_SECONDS: '1', JOBDECK_SCHEDULE_TICK_MS: '200' })).toEqual({ tickMs: 200, graceMs: 60_000, allowSeconds: true });
    expect(() => scheduleSettingsFromEnv({ JOBDECK_SCHEDULE_GRACE_MS: 'soon' })).toThrow('JOBDECK_SCHEDULE_GRACE_MS: expected an integer from 0 to 86400000, got "soon"');
  });
});
