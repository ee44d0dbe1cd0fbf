/**
 * The run report: Markdown for a ticket, and one self-contained HTML page whose charts are
 * inline SVG. The page is rendered in headless Chromium with the network off; the charts must
 * be there with their marks, and a screenshot is saved (UPDATE_SCREENSHOT=1 refreshes docs/).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { findRun, waitForResult } from '../src/operations';
import { collectReport } from '../src/report/collect';
import { renderMarkdown } from '../src/report/markdown';
import { useTestEnvironment } from './helpers/environment';
import { EXPECTED_SQL, ordersSpec } from './helpers/orders';
import { runCli } from './helpers/cli';

const env = useTestEnvironment('report', { rows: 60_000 });

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; CI must install it (apt-get install chromium)`);
const maybe = available ? test : test.skip;

let runId: string;

beforeAll(async () => {
  // last month's values, 3 % low: the baseline the distribution chart compares with
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT id, tenant, created_at, round(amount_usd * 0.97, 2) FROM (${EXPECTED_SQL}) e`);
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'report-run',
      reason: 'INC-142: amount_usd used a stale EUR rate <script>alert(1)</script> & rounding',
      partition: { by: 'time', column: 'created_at', size: '1 day' },
      validate: {
        canary: { partitions: 2 },
        distributions: [{ column: 'amount_usd', mean: 0.1, nullRate: 0.01 }],
        invariants: [
          {
            name: 'no-null-usd-for-priced',
            sql: 'SELECT s.id FROM source_rows s JOIN app.orders_usd t ON t.id = s.id WHERE s.amount_cents IS NOT NULL AND s.currency IN (SELECT currency FROM app.fx) AND t.amount_usd IS NULL',
          },
        ],
      },
      after: [{ action: 'analyze' }],
      downstream: { consumers: ['finance dashboard'], changesSemantics: true },
      limits: { chunkSize: 1500, concurrency: 4 },
    }),
  );
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  runId = started.runId;
});

test('the Markdown report holds the scope, the frozen transform, every gate, downstream and the audit trail', async () => {
  const md = renderMarkdown(await collectReport(env.db.pool, await findRun(env.db.pool, runId, env.db.envVar)));
  for (const heading of [
    '## Scope and reason',
    '## Frozen transform',
    '## Outcome',
    '## Gates',
    '## Distributions',
    '## Downstream',
    '## Partitions',
    '## Audit trail',
  ])
    expect(md).toContain(heading);
  expect(md).toMatch(/\| amount_usd \| before \| \d+ \|/);
  expect(md).toMatch(/\| final \| distribution:amount_usd \| all \| passed \|/);
  expect(md).toContain('round(c.amount_cents * f.usd_rate / 100.0, 2)');
  expect(md).toMatch(/\| canary \| compare \| all \| passed \|/);
  expect(md).toMatch(/\| final \| invariant:no-null-usd-for-priced \| all \| passed \|/);
  expect(md).toMatch(/\| 1 \| ANALYZE the target \| succeeded \|/);
  expect(md).toMatch(/\| [^|]+ \| canary-passed \| backfill \|/);
  expect(md).toContain('this change alters what the values mean');
  expect(md).toMatch(/Throughput: [\d.]+k? rows\/s on average/);
  // which role's powers the chunks ran with (the tests connect as a superuser)
  expect(md).toMatch(/\| Database role \| \S+ \(superuser\) \|/);
});

maybe(
  'the HTML report renders offline in Chromium with its charts drawn (a distribution before and after among them), and text from the spec is escaped',
  async () => {
    const file = path.join(os.tmpdir(), `report-${runId}.html`);
    const cli = await runCli(['report', runId, '-o', 'html', '--out', file, '--database', env.db.envVar]);
    expect(cli.code).toBe(0);
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toMatch(/(src|href)="https?:/); // nothing to fetch

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const requests: string[] = [];
      page.on('request', (r) => void (r.url().startsWith('file:') || requests.push(r.url())));
      await page.goto(`file://${file}`);
      const charts = await page.$$eval('svg.chart', (svgs) =>
        svgs.map((s) => ({
          kind: s.getAttribute('data-chart'),
          // a line's points, a scatter's dots, bars
          marks:
            [...s.querySelectorAll('path')].reduce((n, p) => n + (p.getAttribute('d') ?? '').split('L').length, 0) + s.querySelectorAll('circle, rect').length,
          width: s.getBoundingClientRect().width,
        })),
      );
      expect(charts.map((c) => c.kind)).toEqual(['throughput', 'chunk-durations', 'rows-per-partition', 'partitions-by-status', 'distribution-amount_usd']);
      for (const c of charts) {
        expect(c.marks).toBeGreaterThan(1);
        expect(c.width).toBeGreaterThan(300);
      }
      expect(await page.locator('table.gates td.bad').count()).toBe(0);
      expect(requests).toEqual([]);
      const dir = process.env.UPDATE_SCREENSHOT ? path.join(__dirname, '..', 'docs') : path.join(os.tmpdir(), 'backfill-test-screenshots');
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: path.join(dir, 'run-report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  },
);

test('a wrong format is refused before anything is read; -o takes json, --format stays the older name of -o', async () => {
  const cli = await runCli(['report', runId, '-o', 'pdf', '--database', env.db.envVar]);
  expect(cli.code).toBe(2);
  expect(cli.stderr).toMatch(/Allowed choices are markdown, html, json/);
  const both = await runCli(['report', runId, '-o', 'json', '--format', 'html', '--database', env.db.envVar]);
  expect({ code: both.code, stderr: both.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('-o json and --format html disagree') });
  const json = await runCli(['report', runId, '-o', 'json', '--database', env.db.envVar]);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ summary: { runId } });
  const older = await runCli(['report', runId, '--format', 'markdown', '--database', env.db.envVar]);
  expect(older.code).toBe(0);
  expect(older.stdout).toMatch(/^# /);
});
