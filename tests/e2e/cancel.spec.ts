import { expect, expectNoReload, markNoReload, submitSpec, e2eServer, test } from './fixtures';

/** Cancelling a running job from its page ends it CANCELLED, and the page says so live. */
test('cancel a running job from its page: CANCELLED, shown live', async ({ app: page }) => {
  const id = await submitSpec('name: cancel-me\nrun: |\n  echo "working"\n  sleep 300\n');
  await page.goto(`${e2eServer().url}/jobs/${id}`);
  await markNoReload(page);
  const header = page.getByTestId('job-header');
  await expect(header.locator('[data-status]').first()).toHaveAttribute('data-status', 'RUNNING');
  await expect(page.getByTestId('log-viewer').getByText('working', { exact: true })).toBeVisible();

  await page.getByRole('button', { name: 'Cancel job' }).click();
  await page.getByRole('button', { name: 'Confirm cancel' }).click();

  await expect(header.locator('[data-status]').first()).toHaveAttribute('data-status', 'CANCELLED');
  await expect(header.getByText('Cancelled', { exact: true })).toBeVisible();
  await expect(page.getByTestId('log-viewer').getByText(/^Job ended: CANCELLED/)).toBeVisible();
  await expect(page.getByTestId('attempt-0-1')).toHaveAttribute('data-status', 'CANCELLED');
  await expect(page.getByRole('button', { name: 'Cancel job' })).toHaveCount(0);
  await expectNoReload(page);
});
