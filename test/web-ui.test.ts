/**
 * The Temporal Web UI served by the dev server shows a run as operators find it: filtered by
 * its BackfillRunId search attribute, with the progress table in the User Metadata tab's
 * current details. Drives headless Chromium and saves a screenshot (docs/web-ui-user-metadata.png
 * with UPDATE_SCREENSHOT=1).
 * Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium); CI installs it, and on a machine
 * without it this test is skipped with a warning instead of failing.
 */
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Frame } from 'playwright-core';
import { waitForResult } from '../src/operations';
import { pollUntil } from '../src/util/poll-until';
import { ordersSpec } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('webui', { rows: 30_000 });

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; CI must install it (apt-get install chromium)`);
if (!available) process.stderr.write(`web-ui.test.ts skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)\n`);
const maybe = available ? test : test.skip;

let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
});

maybe('the run is found by its search attribute and its User Metadata tab shows the progress table with the right numbers', async () => {
  const spec = ordersSpec(env.db.envVar, { name: 'ui-check', partition: { by: 'range', column: 'id', size: 20_000 } });
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const ui = process.env.BACKFILL_TEST_TEMPORAL_UI!;
  const query = encodeURIComponent(`BackfillRunId="${started.runId}"`);
  await page.goto(`${ui}/namespaces/default/workflows?query=${query}`);
  const link = page.getByRole('link', { name: started.workflowId, exact: true });
  await link
    .first()
    .waitFor({ timeout: 30_000 })
    .catch(async (err) => {
      await page.screenshot({ path: '/tmp/ui-debug.png', fullPage: true });
      process.stderr.write(`PAGE TEXT: ${(await page.locator('body').innerText()).slice(0, 3000)}\n`);
      throw err;
    });
  expect(await page.getByRole('link', { name: /^backfill\// }).count()).toBe(1);
  await link.first().click();

  await page.getByText('User Metadata', { exact: true }).first().click();
  // the UI renders each Markdown block (summary, details, current details) in its own sandboxed iframe;
  // current details come from the metadata query, answered by the worker
  const heading = `Backfill ui-check / ${started.runId}: succeeded`;
  const deadline = Date.now() + 30_000;
  let tables: string[] | undefined;
  while (!tables) {
    for (const frame of page.frames()) {
      const text = await frameText(frame);
      if (text.includes(heading))
        tables = await frame
          .locator('table')
          .evaluateAll((els) => els.map((t) => (t as unknown as { innerText: string }).innerText.replace(/\s+/g, ' ').trim()));
    }
    if (!tables && Date.now() > deadline) throw new Error(`no frame of the User Metadata tab shows "${heading}"`);
    if (!tables) await page.waitForTimeout(250);
  }
  const p = result.partitions;
  expect(tables).toEqual(
    expect.arrayContaining([
      `partitions total pending running succeeded failed cancelled ${p.total} 0 0 ${p.succeeded} 0 0`,
      `rows (finished partitions) read written unchanged ${result.rowsRead} ${result.rowsWritten} ${result.rowsUnchanged}`,
    ]),
  );
  // UPDATE_SCREENSHOT=1 refreshes the committed one in docs/; otherwise it goes to the temp directory
  const dir = process.env.UPDATE_SCREENSHOT ? path.join(__dirname, '..', 'docs') : path.join(os.tmpdir(), 'backfill-test-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, 'web-ui-user-metadata.png'), fullPage: true });

  // partitions are workflows of their own: the list finds a run's by their workflow id's prefix
  // (as docs/operating.md says), and each one's details name the run that started it
  const partitions = encodeURIComponent(`WorkflowId STARTS_WITH "${started.workflowId}/"`);
  await page.goto(`${ui}/namespaces/default/workflows?query=${partitions}`);
  // a substring match: the run's own link has no `/` after its id
  const partitionLinks = page.getByRole('link', { name: `${started.workflowId}/` });
  await partitionLinks.first().waitFor({ timeout: 30_000 });
  expect(await pollUntil(async () => ((await partitionLinks.count()) === p.total ? true : undefined), { timeoutMs: 15_000, intervalMs: 250 })).toBe(true);
  await partitionLinks.first().click();
  await page.getByText('User Metadata', { exact: true }).first().click();
  const startedBy = `Started by the run workflow ${started.workflowId}`;
  const shown = await pollUntil(
    async () => {
      for (const frame of page.frames()) if ((await frameText(frame)).replace(/\s+/g, ' ').includes(startedBy)) return true;
      return undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  expect(shown).toBe(true);
});

maybe('a run with a failing partition shows Failed in the list filtered by ExecutionStatus, and its failure says what failed and what to run', async () => {
  // rows from id 20,000 on break a CHECK on the target: the first partition succeeds, the others fail
  await env.db.pool.query('TRUNCATE app.orders_usd');
  await env.db.pool.query('ALTER TABLE app.orders_usd ADD CONSTRAINT orders_usd_below_20000 CHECK (id < 20000)');
  try {
    const spec = ordersSpec(env.db.envVar, { name: 'ui-failed', partition: { by: 'range', column: 'id', size: 20_000 } });
    const started = await env.start(spec);
    const result = await waitForResult(started.handle);
    const { total, failed } = result.partitions;
    expect(result).toMatchObject({ status: 'failed', partitions: { succeeded: 1, failed: total - 1 } });

    browser ??= await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const ui = process.env.BACKFILL_TEST_TEMPORAL_UI!;
    const query = encodeURIComponent(`ExecutionStatus="Failed" AND BackfillRunId="${started.runId}"`);
    await page.goto(`${ui}/namespaces/default/workflows?query=${query}`);
    const link = page.getByRole('link', { name: started.workflowId, exact: true });
    await link.first().waitFor({ timeout: 30_000 });
    const row = await page.locator('body').innerText();
    expect(row).toContain('Failed');
    // the list as an operator filters it (the run page's failure carries a stack trace with this machine's paths)
    const dir = process.env.UPDATE_SCREENSHOT ? path.join(__dirname, '..', 'docs') : path.join(os.tmpdir(), 'backfill-test-screenshots');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'web-ui-failed-run.png') });
    await link.first().click();
    const failure = `backfill ui-failed/${started.runId} failed: ${failed} of ${total} partitions failed; see backfill status ${started.runId}`;
    await page.getByText(failure).first().waitFor({ timeout: 30_000 });
  } finally {
    await env.db.pool.query('ALTER TABLE app.orders_usd DROP CONSTRAINT orders_usd_below_20000');
  }
});

/** A frame's text; a frame gone while it was read has none. */
function frameText(frame: Frame): Promise<string> {
  return frame
    .locator('body')
    .innerText()
    .catch(() => '');
}
