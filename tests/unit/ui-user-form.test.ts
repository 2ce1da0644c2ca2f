import { describe, expect, it } from 'vitest';
import { ROLES } from '../../lib/jobs/roles';
import { ApiRequestError } from '../../lib/ui/api';
import { draftOfUser, EMPTY_USER, fieldErrorsOf, loginMethods, USER_ROLES, userBody } from '../../lib/ui/user-form';

const mia = { role: 'member', maxPendingJobs: 5, maxRunningCpus: null };

describe('the Users page form', () => {
  it('offers the roles the server knows, least to most', () => {
    expect([...USER_ROLES]).toEqual([...ROLES]);
  });

  it('creates with every field: quotas as numbers, empty ones null, no password when none was typed', () => {
    expect(userBody({ ...EMPTY_USER, name: ' mia ', maxPendingJobs: '3', maxRunningCpus: '1.5' })).toEqual({ body: { name: 'mia', role: 'member', maxPendingJobs: 3, maxRunningCpus: 1.5, maxRunningGpus: null } });
    expect(userBody({ ...EMPTY_USER, name: 'mia', role: 'viewer', password: 'pw-123456' })).toEqual({ body: { name: 'mia', role: 'viewer', password: 'pw-123456', maxPendingJobs: null, maxRunningCpus: null, maxRunningGpus: null } });
  });

  it('changes only what differs from the user: a quota emptied is cleared (null), a new password only when typed', () => {
    const d = draftOfUser({ name: 'mia', ...mia });
    expect(d).toEqual({ name: 'mia', role: 'member', password: '', maxPendingJobs: '5', maxRunningCpus: '', maxRunningGpus: '', osUser: '' });
    expect(userBody(d, mia)).toEqual({ body: {} });
    expect(userBody({ ...d, role: 'viewer' }, mia)).toEqual({ body: { role: 'viewer' } });
    expect(userBody({ ...d, maxPendingJobs: '', maxRunningCpus: '2' }, mia)).toEqual({ body: { maxPendingJobs: null, maxRunningCpus: 2 } });
    expect(userBody({ ...d, password: 'new-pass-1' }, mia)).toEqual({ body: { password: 'new-pass-1' } });
    // The OS account: typed → set, emptied → null (the run account); unchanged → not sent.
    expect(userBody({ ...d, osUser: ' mia-os ' }, mia)).toEqual({ body: { osUser: 'mia-os' } });
    expect(userBody({ ...d, osUser: '' }, { ...mia, osUser: 'mia-os' })).toEqual({ body: { osUser: null } });
    expect(userBody({ ...EMPTY_USER, name: 'mia', osUser: 'mia-os' })).toEqual({ body: { name: 'mia', role: 'member', maxPendingJobs: null, maxRunningCpus: null, maxRunningGpus: null, osUser: 'mia-os' } });
    // A field the API did not send (an older server) counts as not set.
    expect(userBody({ ...d, maxRunningCpus: '' }, { role: 'member', maxPendingJobs: 5 } as never)).toEqual({ body: {} });
  });

  it('says which quota is not a number before asking the server; ranges are left to the server', () => {
    expect(userBody({ ...EMPTY_USER, name: 'mia', maxPendingJobs: 'lots', maxRunningCpus: 'x' })).toEqual({ errors: { maxPendingJobs: 'must be a whole number, or empty for none', maxRunningCpus: 'must be a number of CPUs, or empty for none' } });
    expect(userBody({ ...EMPTY_USER, name: 'mia', maxPendingJobs: '-1' })).toEqual({ body: { name: 'mia', role: 'member', maxPendingJobs: -1, maxRunningCpus: null, maxRunningGpus: null } });
    expect(userBody({ ...EMPTY_USER, name: 'mia', maxRunningGpus: 'two' })).toEqual({ errors: { maxRunningGpus: 'must be a number of GPUs, or empty for none' } });
  });

  it("puts an API refusal next to the field it names: a 400's issues, a 409's field, else in general", () => {
    const bad = new ApiRequestError(400, 'Bad Request', 'request body: name: must be lower-case…; maxPendingJobs: Too small', {
      issues: [
        { path: 'name', message: 'must be lower-case…' },
        { path: 'maxPendingJobs', message: 'Too small' },
      ],
    });
    expect(fieldErrorsOf(bad)).toEqual({ name: 'must be lower-case…', maxPendingJobs: 'Too small' });
    expect(fieldErrorsOf(new ApiRequestError(409, 'Conflict', 'user mia exists', { field: 'name' }))).toEqual({ name: 'user mia exists' });
    expect(fieldErrorsOf(new ApiRequestError(400, 'Bad Request', 'request body: Unrecognized key: "x"', { issues: [{ path: '', message: 'Unrecognized key: "x"' }] }))).toEqual({ general: 'request body: Unrecognized key: "x"' });
    expect(fieldErrorsOf(new TypeError('Failed to fetch'))).toEqual({ general: 'Failed to fetch' });
  });

  it('says how a user logs in', () => {
    expect(loginMethods({ hasPassword: true, sso: false })).toBe('password');
    expect(loginMethods({ hasPassword: false, sso: true })).toBe('single sign-on');
    expect(loginMethods({ hasPassword: true, sso: true })).toBe('password, single sign-on');
    expect(loginMethods({ hasPassword: false, sso: false })).toBe('token only');
  });
});
