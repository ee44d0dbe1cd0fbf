/**
 * Downstream, only after the gates: after-actions run in order once a run succeeded (every
 * partition, the whole-run check), each recorded with its outcome; a failing action leaves
 * the run succeeded with downstream failed, and `backfill after` runs what is left.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { renderStatus } from '../src/cli/render/status';
import { runAfterActions } from '../src/after-actions/run-actions';
import { statusReportFor, waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec, TRANSFORM_SQL } from './helpers/orders';
import { startTestWorker, uniqueQueue } from './helpers/temporal';

const env = useTestEnvironment('after', { rows: 20_000, worker: false });

let server: http.Server;
let url: string;
const received: { path: string; body: unknown }[] = [];
let answer = 200;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env.worker = await startTestWorker(uniqueQueue('after'), { trust: { webhookUrls: [`${url}/hooks/`] } });
  await env.db.pool.query(`
    CREATE MATERIALIZED VIEW app.daily_usd AS SELECT date_trunc('day', created_at) AS day, sum(amount_usd) AS total, count(*) AS n FROM app.orders_usd GROUP BY 1;
    CREATE UNIQUE INDEX ON app.daily_usd (day);
    CREATE TABLE app.backfill_log (note text, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

afterEach(async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd, app.backfill_log');
  received.length = 0;
  answer = 200;
});

const actions = () => [
  { action: 'analyze' as const },
  { action: 'refresh' as const, view: 'app.daily_usd' },
  { action: 'sql' as const, sql: "INSERT INTO app.backfill_log (note) VALUES ('orders_usd recomputed')" },
  { action: 'notify' as const, channel: 'backfill_done' },
  { action: 'webhook' as const, url: `${url}/hooks/backfill` },
];

test('after the gates pass, every action runs in order and is recorded; the view shows the new values and the webhook gets the summary', async () => {
  const listener = new pg.Client({ connectionString: env.db.url });
  await listener.connect();
  const notes: string[] = [];
  listener.on('notification', (n) => notes.push(n.payload ?? ''));
  await listener.query('LISTEN backfill_done');
  try {
    const started = await env.start(
      ordersSpec(env.db.envVar, {
        name: 'after-all',
        after: actions(),
        downstream: { consumers: ['finance dashboard', 'billing-service'], changesSemantics: false },
      }),
    );
    const result = await waitForResult(started.handle);
    expect(result).toMatchObject({ status: 'succeeded', downstream: 'succeeded' });
    expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });

    const { rows: recorded } = await env.db.pool.query(
      'SELECT position, action, status, tries, started_at, finished_at FROM backfill.after_actions WHERE run_id = $1 ORDER BY position',
      [started.runId],
    );
    expect(recorded.map((r) => [r.action, r.status, r.tries])).toEqual([
      ['analyze', 'succeeded', 1],
      ['refresh', 'succeeded', 1],
      ['sql', 'succeeded', 1],
      ['notify', 'succeeded', 1],
      ['webhook', 'succeeded', 1],
    ]);
    // in order, and only after the final gate was recorded
    const { rows: gates } = await env.db.pool.query("SELECT max(checked_at) AS at FROM backfill.gate_results WHERE run_id = $1 AND stage = 'final'", [
      started.runId,
    ]);
    expect(recorded[0].started_at.getTime()).toBeGreaterThanOrEqual(gates[0].at.getTime());
    for (let i = 1; i < recorded.length; i++) expect(recorded[i].started_at.getTime()).toBeGreaterThanOrEqual(recorded[i - 1].finished_at.getTime());

    // the view was empty before the run; it now holds the new values
    const { rows: view } = await env.db.pool.query(
      'SELECT (SELECT sum(total) FROM app.daily_usd) = (SELECT sum(amount_usd) FROM app.orders_usd) AS same, (SELECT sum(n) FROM app.daily_usd)::int AS n',
    );
    expect(view[0]).toEqual({ same: true, n: result.rowsWritten });
    const { rows: analyzed } = await env.db.pool.query(
      "SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relid = 'app.orders_usd'::regclass",
    );
    expect(analyzed[0].analyzed).toBe(true);
    expect((await env.db.pool.query('SELECT note FROM app.backfill_log')).rows).toEqual([{ note: 'orders_usd recomputed' }]);

    expect(received).toHaveLength(1);
    expect(received[0].path).toBe('/hooks/backfill');
    expect(received[0].body).toMatchObject({
      runId: started.runId,
      name: 'after-all',
      status: 'succeeded',
      rows: { written: result.rowsWritten },
      consumers: ['finance dashboard', 'billing-service'],
    });
    expect((received[0].body as { gates: { gate: string; passed: boolean }[] }).gates).toEqual(
      expect.arrayContaining([{ stage: 'final', gate: 'compare', passed: true, violations: 0 }]),
    );
    expect(notes.map((n) => JSON.parse(n).runId)).toEqual([started.runId]);

    const status = renderStatus(await statusReportFor(env.db.pool, started.runId));
    expect(status).toMatch(/Downstream: succeeded/);
    expect(status).toMatch(/Consumers: finance dashboard, billing-service/);
  } finally {
    await listener.end();
  }
});

test('a failing webhook leaves the run succeeded with downstream failed; backfill after runs what is left, not what already ran', async () => {
  answer = 503;
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'after-retry', after: actions() }));
  const result = await waitForResult(started.handle);
  expect(result).toMatchObject({ status: 'succeeded', downstream: 'failed' });
  expect(received).toHaveLength(3); // tried three times
  const status = renderStatus(await statusReportFor(env.db.pool, started.runId));
  expect(status).toMatch(/Downstream: failed — retry the actions alone with: backfill after /);
  expect(status).toMatch(/failed +POST the run summary to .*: webhook answered 503/);

  answer = 200;
  const outcome = await runAfterActions(env.db.pool, started.runId, { trust: { webhookUrls: [`${url}/hooks/`] }, actor: 'test' });
  expect(outcome.downstream).toBe('succeeded');
  expect(outcome.actions.map((a) => [a.action, a.tries])).toEqual([
    ['analyze', 1],
    ['refresh', 1],
    ['sql', 1],
    ['notify', 1],
    ['webhook', 4],
  ]);
  // the statement ran once: the retry did not repeat what had succeeded
  expect((await env.db.pool.query('SELECT count(*)::int AS n FROM app.backfill_log')).rows[0].n).toBe(1);
});

test('a webhook outside BACKFILL_WEBHOOK_URLS is refused without a request; a failed gate runs no action at all', async () => {
  const refused = await env.start(ordersSpec(env.db.envVar, { name: 'after-refused', after: [{ action: 'webhook', url: `${url}/elsewhere` }] }));
  expect(await waitForResult(refused.handle)).toMatchObject({ status: 'succeeded', downstream: 'failed' });
  const { rows } = await env.db.pool.query('SELECT tries, last_error FROM backfill.after_actions WHERE run_id = $1', [refused.runId]);
  expect(rows[0]).toMatchObject({ tries: 1 });
  expect(rows[0].last_error).toMatch(/is not on this worker's BACKFILL_WEBHOOK_URLS/);
  expect(received).toHaveLength(0);

  await env.db.pool.query('TRUNCATE app.orders_usd');
  const wrong = TRANSFORM_SQL.replace('AS amount_usd', '+ 0.01 AS amount_usd');
  const gated = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'after-gated',
      transform: { name: 'orders-usd', version: 3, sql: wrong },
      validate: {
        invariants: [
          {
            name: 'cents',
            sql: 'SELECT s.id FROM source_rows s LEFT JOIN app.fx f USING (currency) JOIN app.orders_usd t ON t.id = s.id WHERE t.amount_usd IS DISTINCT FROM round(s.amount_cents * f.usd_rate / 100.0, 2)',
          },
        ],
      },
      after: actions(),
    }),
  );
  const result = await waitForResult(gated.handle);
  expect(result.status).toBe('failed');
  expect(result.downstream).toBeUndefined();
  expect((await env.db.pool.query('SELECT count(*)::int AS n FROM backfill.after_actions WHERE run_id = $1', [gated.runId])).rows[0].n).toBe(0);
  expect(received).toHaveLength(0);
});
