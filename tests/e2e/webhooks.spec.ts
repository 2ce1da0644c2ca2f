import { Receiver } from '../helpers/webhook-receiver';
import { e2eServer, example, expect, login, submitSpec, test, waitForStatus } from './fixtures';

/**
 * The /webhooks page against the run's real server and a real receiver on 127.0.0.1: create
 * (the secret shown once, not after a reload), send a test event and see it delivered in the
 * log, and the job page's Notifications section for a job whose failure was sent.
 */
test('create a webhook (secret shown once), send a test event, see the delivery log and a job page\u2019s notifications', async ({ page }) => {
  const r = await new Receiver().up();
  try {
    await login(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect(page).toHaveURL(/\/webhooks$/);
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('Name', { exact: true }).fill('e2e-hook');
    await form.getByLabel('URL').fill(r.url);
    await form.getByRole('button', { name: 'Create' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByRole('listitem').filter({ hasText: 'e2e-hook' });
    await row.getByRole('button', { name: 'Send test event' }).click();
    await row.getByRole('button', { name: 'e2e-hook', exact: true }).click();
    const log = page.getByRole('table', { name: 'Deliveries of e2e-hook' });
    const delivered = log.getByRole('row').filter({ hasText: 'test' });
    await expect(delivered).toContainText('delivered');
    // The table's columns: when it was queued, tries, the answer's code, no next try once delivered.
    await expect(delivered.getByRole('cell').first()).toHaveText(/^(just now|\d+ (seconds?|minutes?) ago)$/);
    await expect(delivered.getByTestId('delivery-tries')).toHaveText('1');
    await expect(delivered.getByRole('cell').nth(5)).toHaveText('204');
    await expect(delivered.getByTestId('delivery-next')).toHaveText('—');
    // One test event, signed with the secret (a job of another spec file that fails meanwhile
    // is delivered to the new hook too: it takes job.failed, the form's default).
    expect(r.verified(secret).filter((g) => g.payload.type === 'test')).toHaveLength(1);
    await page.reload();
    await expect(page.getByText(secret.slice(6))).toHaveCount(0);
    const id = await submitSpec(example('setup-fails'));
    await waitForStatus(id, ['FAILED_SETUP']);
    await page.goto(`${e2eServer().url}/jobs/${id}`);
    await expect(page.getByRole('region', { name: 'Notifications' })).toContainText('e2e-hook · job.failed · delivered');
  } finally {
    await r.down();
  }
});
