/**
 * `report <run> --serve`: the live partition grid, seen in headless Chromium while a paced run
 * moves — cells change colour as partitions finish, each links to its partition's workflow in
 * the Temporal Web UI, a failed partition shows its message and key range on hover; the server
 * listens on 127.0.0.1 only and ends on SIGINT. Needs Chromium (CHROMIUM_PATH, default
 * /usr/bin/chromium); CI installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { waitForResult } from '../src/operations';
import { partitionWorkflowId } from '../src/domain/ids';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';
import { temporalAddress } from './helpers/temporal';
import { waitUntil } from './helpers/wait';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; CI must install it (apt-get install chromium)`);
const maybe = available ? test : test.skip;

const env = useTestEnvironment('livegrid', { rows: 24_000 });

/** `backfill report <run> --serve --port 0` in its own process; resolves with the URL it prints. */
function serve(runId: string): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(
    process.execPath,
    [path.resolve(__dirname, '../dist/client.js'), 'report', runId, '--serve', '--port', '0', '--database', env.db.envVar],
    {
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_UI_URL: 'http://ui.test:8233' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  return new Promise((resolve, reject) => {
    const take = (d: Buffer) => {
      text += d.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(text)?.[0];
      if (url) resolve({ url, child, output: () => text });
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => reject(new Error(`report --serve exited ${code}: ${text}`)));
  });
}

maybe(
  'the grid changes colour as partitions finish, links each cell to its partition workflow, shows a failure on hover, and ends on SIGINT',
  async () => {
    const pool = env.db.pool;
    // one partition fails (a value its target refuses), the rest succeed at a pace the page can watch
    const bad = (await pool.query("SELECT id FROM app.orders WHERE status <> 'void' AND currency = 'USD' AND id >= 60000 ORDER BY id LIMIT 1")).rows[0].id;
    await pool.query('ALTER TABLE app.orders_usd ADD CONSTRAINT live_sane CHECK (amount_usd < 1e9)');
    await pool.query('UPDATE app.orders SET amount_cents = 1e12 WHERE id = $1', [bad]);
    const started = await env.start(
      ordersSpec(env.db.envVar, {
        name: 'live-grid',
        partition: { by: 'range', column: 'id', size: 10_000 },
        limits: { chunkSize: 500, concurrency: 2, rowsPerSecond: 2_500 },
      }),
    );
    const server = await serve(started.runId);
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      const page = await browser.newPage();
      await page.goto(server.url);
      const states = () => page.$$eval('#grid a', (as) => as.map((a) => a.getAttribute('data-state') ?? ''));
      await waitUntil(async () => (await states()).length > 0, 'the grid to be drawn', 30_000);
      const first = await states();
      expect(first.length).toBe(started.partitions);
      expect(first.some((s) => s !== 'succeeded')).toBe(true);
      // the same page, without reloading, as partitions finish
      await waitUntil(
        async () => (await states()).filter((s) => s === 'succeeded').length > first.filter((s) => s === 'succeeded').length,
        'a cell to turn succeeded',
        60_000,
      );
      const result = await waitForResult(started.handle);
      expect(result.status).toBe('failed');
      await waitUntil(async () => (await states()).every((s) => s === 'succeeded' || s === 'failed'), 'the grid to show the end', 30_000);
      const cells = await page.$$eval('#grid a', (as) =>
        as.map((a) => ({
          id: a.getAttribute('data-id'),
          state: a.getAttribute('data-state'),
          href: a.getAttribute('href'),
          title: a.getAttribute('title') ?? '',
        })),
      );
      const failed = cells.filter((c) => c.state === 'failed');
      expect(failed).toHaveLength(1);
      expect(failed[0].title).toMatch(/violates check constraint "live_sane"/);
      expect(failed[0].title).toMatch(/stopped at id in /);
      expect(cells[0].href).toBe(
        `http://ui.test:8233/namespaces/default/workflows/${encodeURIComponent(partitionWorkflowId('live-grid', started.runId, cells[0].id!))}`,
      );
      // painted: a failed cell is red, a succeeded one green
      const colours = (await page.evaluate(
        "[...new Set([...document.querySelectorAll('#grid a')].map((a) => getComputedStyle(a).backgroundColor))]",
      )) as string[];
      expect(colours.sort()).toEqual(['rgb(207, 34, 46)', 'rgb(45, 164, 78)']);
      // the run's line, as the page's next look after the end shows it
      await waitUntil(async () => /^FAILED — /.test((await page.textContent('#line')) ?? ''), 'the page to show the run failed', 15_000);
      expect(await page.$$eval('#charts svg polyline', (ps) => ps.length)).toBeGreaterThanOrEqual(1);
    } finally {
      await browser?.close();
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGINT');
      expect(await exited).toBe(0);
      await pool.query('UPDATE app.orders SET amount_cents = 100 WHERE id = $1', [bad]);
      await pool.query('ALTER TABLE app.orders_usd DROP CONSTRAINT live_sane');
    }
  },
  180_000,
);
