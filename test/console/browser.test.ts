// The console in a real browser: Debian's Chromium driven by playwright-core signs in as the owner (made by the
// CLI) and goes through each page: the DMS documents with their filters, one document and its re-processing, the
// notifications, the API keys with a key made and its secret shown once. Each page is checked with axe-core (no
// serious or critical violation of WCAG 2 A/AA); and the administration pages: members (one added, its password shown
// once), a webhook endpoint added and its secret rotated, a posting with what QuickBooks holds for it. With CONSOLE_SCREENSHOTS=1 the main pages are saved to
// docs/console/ (how the README's pictures are made; a normal run writes nothing).
import test from 'ava';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { kyselyOver } from '../../server/platform/database/database.js';
import { startTestService, type TestService } from '../support/service.js';
import { CHROMIUM_MISSING, findChromium, launchChromium } from '../docs/chromium.js';
import { openOneTrip } from '../support/trips.js';
import { postedThere, seedDistributor, type Distributor } from './support.js';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs', 'console') : null;

let running: TestService;
let shop: Distributor;
let browser: Browser;

test.before(async () => {
  const chromium = findChromium();
  if (!chromium) throw new Error(CHROMIUM_MISSING);
  running = await startTestService('console_browser', { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  shop = await seedDistributor(kyselyOver(running.service.database.pool), running.database.url);
  await openOneTrip(running.service.database.pool, shop.organizationId);
  browser = await launchChromium(chromium);
});
test.after.always(async () => {
  await browser?.close();
  await running?.stop();
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core on the page as it is: the violations rated serious or critical. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

test('the owner signs in and uses every page in Chromium; axe finds no serious or critical violation on any', async (t) => {
  // The page's policy allows no script; axe is injected by the test, so this context bypasses it (the pages do not).
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  const checked: string[] = [];
  const check = async (name: string) => {
    t.deepEqual(await seriousViolations(page), [], `${name}: no serious or critical accessibility violation`);
    checked.push(name);
  };
  const base = running.baseUrl;

  await page.goto(`${base}/console/dms`);
  t.is(new URL(page.url()).pathname, '/console/sign-in', 'not signed in: the sign-in page');
  await check('sign-in');
  await screenshot(page, 'sign-in');
  await page.getByLabel('E-mail', { exact: true }).fill(shop.owner.email);
  await page.getByLabel('Password', { exact: true }).fill('a wrong password, once');
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.true(await page.getByRole('alert').filter({ hasText: 'The e-mail or the password is wrong.' }).isVisible());
  await page.getByLabel('Password', { exact: true }).fill(shop.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.is(new URL(page.url()).pathname, '/console/dms');
  t.true(await page.getByText('Grace Namuli (owner)').isVisible());
  await check('DMS documents');
  await screenshot(page, 'dms-documents');

  // Filter with the form as a person would: rejected, reason R03.
  await page.getByLabel('State', { exact: true }).selectOption('rejected');
  await page.getByLabel('Reason', { exact: true }).selectOption('R03');
  await page.getByRole('button', { name: 'Show' }).click();
  t.is(new URL(page.url()).search, '?state=rejected&reason=R03&salesman=&date=&type=');
  const rows = page.locator('table').last().locator('tbody tr');
  t.is(await rows.count(), 1);
  await rows.first().getByRole('link').click();
  t.regex(new URL(page.url()).pathname, /^\/console\/dms\/dmd_/);
  t.true(await page.getByRole('heading', { name: 'sale_invoice CSR01000003' }).isVisible());
  t.true(await page.getByText('Salesman SM02 is not linked to a member').first().isVisible());
  await check('DMS document');
  await screenshot(page, 'dms-document');
  await page.getByRole('button', { name: 'Re-process this document' }).click();
  t.true(await page.getByRole('status').filter({ hasText: '1 document(s) are received again' }).isVisible());

  await page.getByRole('link', { name: /^Notifications/ }).click();
  t.true(await page.getByText('reconciled with 2 differences').first().isVisible());
  await check('notifications');
  await screenshot(page, 'notifications');
  await page.getByRole('button', { name: /^Mark read\s*: Salesman SM01/ }).click();
  t.is(new URL(page.url()).pathname, '/console/notifications');

  await page.getByRole('link', { name: 'API keys' }).click();
  await check('API keys');
  await page.getByLabel('Name', { exact: true }).fill('Accounting sync');
  await page.getByLabel('customers:read', { exact: true }).check();
  await page.getByLabel('invoices:read', { exact: true }).check();
  await page.getByRole('button', { name: 'Make the key' }).click();
  const secret = await page.locator('.secret').textContent();
  t.regex(secret ?? '', /_test_/);
  await check('API key made');
  await screenshot(page, 'api-keys');

  await page.getByRole('link', { name: 'Reconciliation' }).click();
  await page.getByRole('row').filter({ hasText: 'SM01' }).getByRole('link', { name: '2026-11-25' }).click();
  t.true(await page.getByRole('heading', { name: 'Salesman SM01, 2026-11-25' }).isVisible());
  await check('reconciliation day');
  await screenshot(page, 'reconciliation');
  await page.getByRole('link', { name: 'Trips' }).click();
  await check('trips');
  await page.locator('table tbody tr').first().getByRole('link').click();
  t.true(await page.getByRole('heading', { name: 'Money' }).isVisible());
  await check('settlement sheet');
  await screenshot(page, 'settlement-sheet');
  await page.getByRole('link', { name: 'Postings' }).click();
  await check('postings');
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await check('webhooks');
  await page.getByRole('link', { name: 'API log' }).click();
  t.true(await page.getByText(`member:${shop.owner.memberId}`).first().isVisible());
  await check('API log');

  // A download of the list as CSV, from the link.
  await page.goto(`${base}/console/dms`);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download these documents as CSV' }).click(),
  ]);
  t.is(download.suggestedFilename(), 'dms-documents.csv');

  await page.getByRole('button', { name: 'Sign out' }).click();
  t.is(new URL(page.url()).pathname, '/console/sign-in');
  t.true(await page.getByText('You are signed out.').isVisible());
  await context.close();
  t.deepEqual(checked, [
    'sign-in',
    'DMS documents',
    'DMS document',
    'notifications',
    'API keys',
    'API key made',
    'reconciliation day',
    'trips',
    'settlement sheet',
    'postings',
    'webhooks',
    'API log',
  ]);
});

test('a member of role none sees no re-process button, no keys link, and no personal field of a document', async (t) => {
  const context = await browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  await page.goto(`${running.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail', { exact: true }).fill(shop.clerk.email);
  await page.getByLabel('Password', { exact: true }).fill(shop.clerk.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.is(await page.getByRole('link', { name: 'API keys' }).count(), 0);
  t.is(await page.getByRole('button', { name: /^Re-process all/ }).count(), 0);
  await page.goto(`${running.baseUrl}/console/dms/${shop.documents.customer}`);
  t.true(await page.getByText('Personal fields (phone, tax ID) are left out for your role.').isVisible());
  t.false((await page.content()).includes('+256700123456'));
  t.deepEqual(await seriousViolations(page), []);
  await context.close();
});

test('the owner adds a member, a webhook endpoint (and rotates its secret), and reads what QuickBooks and EFRIS hold for a posting; axe finds no serious or critical violation', async (t) => {
  await postedThere(kyselyOver(running.service.database.pool), running.service.connectors, shop.organizationId);
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  const checked: string[] = [];
  const check = async (name: string) => {
    t.deepEqual(await seriousViolations(page), [], `${name}: no serious or critical accessibility violation`);
    checked.push(name);
  };
  await page.goto(`${running.baseUrl}/console/sign-in`);
  await page.getByLabel('E-mail', { exact: true }).fill(shop.owner.email);
  await page.getByLabel('Password', { exact: true }).fill(shop.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();

  await page.getByRole('link', { name: 'Members' }).click();
  t.true(await page.getByRole('cell', { name: /^Peter Ssali mbr_/ }).isVisible());
  await check('members');
  await page.getByLabel('Name', { exact: true }).fill('Joan Akello');
  await page.getByLabel('E-mail (the sign-in name)', { exact: true }).fill('joan@example.com');
  await page.getByLabel('Role', { exact: true }).selectOption('manage-settings');
  await page.getByRole('button', { name: 'Add the member' }).click();
  t.true(((await page.locator('.secret').textContent()) ?? '').length >= 12, 'the first password, shown once');
  await check('member added');
  // Joan's role, not the clerk's: the other tests of this file, running beside this one, sign in as the clerk.
  await page.getByLabel('Role of Joan Akello').selectOption('none');
  await page.getByRole('button', { name: 'Change the role of Joan Akello' }).click();
  t.true(await page.getByRole('status').filter({ hasText: 'The role is changed' }).isVisible());
  await screenshot(page, 'members');

  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByLabel(/^Address/).fill('http://127.0.0.1:9/erp-hooks');
  await page.getByLabel('dms.document.flagged', { exact: true }).check();
  await page.getByRole('button', { name: 'Add the endpoint' }).click();
  t.regex((await page.locator('.secret').textContent()) ?? '', /^whsec_/);
  await check('webhook endpoint added');
  await page.getByRole('button', { name: 'Make a new signing secret' }).click();
  t.regex((await page.locator('.secret').textContent()) ?? '', /^whsec_/);
  await page.getByRole('button', { name: 'Turn this endpoint off' }).click();
  t.true(await page.getByRole('button', { name: /Turn this endpoint on again/ }).isVisible());
  await check('webhook endpoint');
  await screenshot(page, 'webhook-endpoint');

  await page.getByRole('link', { name: 'Postings' }).click();
  await page.getByRole('link', { name: 'invoice CS-000101' }).first().click();
  t.true(await page.getByRole('heading', { name: /^What the (accounting|fiscal) system/ }).isVisible());
  await check('posting');
  await page.goto(`${running.baseUrl}/console/postings/xpo_console101a`);
  t.true(await page.getByText('CS-000101', { exact: true }).isVisible(), 'its number in QuickBooks');
  await screenshot(page, 'posting');
  await context.close();
  t.deepEqual(checked, ['members', 'member added', 'webhook endpoint added', 'webhook endpoint', 'posting']);
});
