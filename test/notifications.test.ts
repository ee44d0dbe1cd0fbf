/**
 * Told when a run needs you (README): a spec's `notify:` targets receive the run's moments from
 * its notifier — a local HTTP receiver as a chat webhook and as a plain JSON one that fails twice
 * before it takes a delivery (retried, one idempotency key throughout), a webhook off the worker's
 * allow-list (refused, never sent), and a PostgreSQL NOTIFY channel. The failed partition and the
 * failed run are told, then the retried attempt's success; no message carries row data; every
 * delivery is in the ledger and `status` says who was told.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { waitForResult } from '../src/operations';
import { runCli } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, ordersSpec } from './helpers/orders';
import { startTestWorker, testClient, uniqueQueue, type TestWorker } from './helpers/temporal';
import { waitUntil } from './helpers/wait';
import { startRun } from '../src/operations/start-run';
import { writeSpec } from './helpers/orders';
import type { Client } from '@temporalio/client';

interface Received {
  path: string;
  key: string;
  body: Record<string, unknown>;
}

let db: TestDatabase;
let worker: TestWorker;
let client: Client;
let closeClient: () => Promise<void>;
let receiver: http.Server;
let base: string;
const received: Received[] = [];
let flakyFailures = 2;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', key: String(req.headers['idempotency-key'] ?? ''), body: JSON.parse(text) });
      if (req.url === '/flaky' && flakyFailures-- > 0) return void res.writeHead(500).end();
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  db = await createTestDatabase('notify');
  await createOrders(db.pool, 12_000);
  worker = await startTestWorker(uniqueQueue('notify'), { trust: { webhookUrls: [`${base}/ok`, `${base}/flaky`] } });
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await db?.drop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const of = (path: string) => received.filter((r) => r.path === path);

test('each target hears the moments it asked for: a failed partition and run, then the retried attempt succeeding; retries keep one key; no row data; the ledger and status say who was told', async () => {
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const notified: Record<string, unknown>[] = [];
  listener.on('notification', (n) => notified.push(JSON.parse(n.payload!)));
  await listener.query('LISTEN backfill_events_test');
  const bad = (await db.pool.query("SELECT id FROM app.orders WHERE status <> 'void' AND currency = 'USD' ORDER BY id OFFSET 50 LIMIT 1")).rows[0].id;
  await db.pool.query('ALTER TABLE app.orders_usd ADD CONSTRAINT notify_sane CHECK (amount_usd < 1e9)');
  await db.pool.query('UPDATE app.orders SET amount_cents = 987654321987 WHERE id = $1', [bad]);
  try {
    const spec = ordersSpec(db.envVar, {
      name: 'notify-run',
      partition: { by: 'range', column: 'id', size: 10_000 },
      limits: { chunkSize: 1_000, concurrency: 2 },
      notify: [
        { webhook: `${base}/ok`, format: 'chat', events: ['started', 'partition-failed', 'failed', 'succeeded'] },
        { webhook: `${base}/flaky`, format: 'json', events: ['failed', 'succeeded'] },
        { webhook: `${base}/blocked`, events: ['failed'] },
        { channel: 'backfill_events_test', events: ['failed', 'succeeded'] },
      ],
    });
    const started = await startRun({ client, taskQueue: worker.taskQueue }, { specFile: writeSpec(spec), actor: 'test', notifyPollMs: 300 });
    expect((await waitForResult(started.handle)).status).toBe('failed');
    const { runId } = started;
    // the notifier goes on after the run: the flaky receiver takes the failure on its third try
    await waitUntil(async () => of('/flaky').length >= 3 && notified.length >= 1, 'the failure to reach every target', 60_000);
    // the receiver answers before the notifier records the answer: the ledger is read once it has
    const delivered = async () =>
      (await db.pool.query("SELECT 1 FROM backfill.notifications WHERE run_id = $1 AND target LIKE '#2 %' AND status = 'delivered'", [runId])).rowCount === 1;
    await waitUntil(delivered, 'the third try to be recorded as delivered', 60_000);
    const ok = of('/ok').map((r) => r.body.text as string);
    expect(ok[0]).toMatch(new RegExp(`^backfill: notify-run/${runId} started by test`));
    expect(ok.some((t) => /partition id:\S+ failed \(id in .*\): .*violates check constraint "notify_sane"/.test(t))).toBe(true);
    expect(ok.some((t) => new RegExp(`notify-run/${runId} failed: \\d[\\d,]* rows written; partitions: \\d+ succeeded, 1 failed of \\d+`).test(t))).toBe(true);
    const flaky = of('/flaky');
    expect(flaky.map((r) => r.key)).toEqual([`${runId}/finished:1`, `${runId}/finished:1`, `${runId}/finished:1`]);
    expect(flaky[2].body).toMatchObject({
      idempotencyKey: `${runId}/finished:1`,
      run: runId,
      name: 'notify-run',
      event: 'failed',
      detail: { status: 'failed' },
    });
    expect(of('/blocked')).toEqual([]);
    expect(notified[0]).toMatchObject({ event: 'failed', run: runId });
    // no row data anywhere: the bad value and the amount it makes
    expect(JSON.stringify([received, notified])).not.toMatch(/987654321987|9876543219\.87/);
    const rows = (
      await db.pool.query('SELECT event_key, target, status, attempts, last_error FROM backfill.notifications WHERE run_id = $1 ORDER BY event_key, target', [
        runId,
      ])
    ).rows;
    expect(rows).toContainEqual({
      event_key: 'finished:1',
      target: `#2 webhook ${base}`,
      status: 'delivered',
      attempts: 3,
      last_error: `#2 webhook ${base} answered 500`,
    });
    expect(rows.find((r) => r.status === 'refused')).toMatchObject({
      event_key: 'finished:1',
      last_error: expect.stringMatching(/not on this worker's BACKFILL_WEBHOOK_URLS/),
    });
    expect(rows.find((r) => r.target === '#4 channel backfill_events_test')).toMatchObject({ status: 'delivered', attempts: 1 });
    const status = await runCli(['status', runId, '--database', db.envVar]);
    expect(status.stdout).toMatch(/notified: +\d+ delivered, 1 refused \(failed to .*BACKFILL_WEBHOOK_URLS/);

    // fixed, retried: the next attempt has a notifier of its own, and its success is told
    await db.pool.query('UPDATE app.orders SET amount_cents = 100 WHERE id = $1', [bad]);
    const retried = await runCli(['retry-failed', runId, '--reason', 'fixed', '--wait', '--database', db.envVar], { BACKFILL_TASK_QUEUE: worker.taskQueue });
    expect(retried.code).toBe(0);
    await waitUntil(async () => of('/flaky').some((r) => r.body.event === 'succeeded'), 'the success to be told', 60_000);
    expect(of('/flaky').find((r) => r.body.event === 'succeeded')!.key).toBe(`${runId}/finished:2`);
    // each target is delivered on its own: the chat target may hear it a moment after the JSON one
    await waitUntil(
      async () => of('/ok').some((r) => new RegExp(`notify-run/${runId} succeeded`).test(r.body.text as string)),
      'the chat target to hear the success',
      30_000,
    );
    await waitUntil(async () => notified.some((n) => n.event === 'succeeded'), 'the channel to hear the success', 30_000);
  } finally {
    await listener.end();
    await db.pool.query('ALTER TABLE app.orders_usd DROP CONSTRAINT IF EXISTS notify_sane');
  }
}, 180_000);

test('a canary waiting for approval and a run held outside its window past heldMinutes are told; so is the cancel that ends each', async () => {
  const hhmm = (hoursAhead: number) => {
    const d = new Date(Date.now() + hoursAhead * 3_600_000);
    return `${String(d.getUTCHours()).padStart(2, '0')}:00`;
  };
  const target = {
    webhook: `${base}/ok`,
    format: 'json' as const,
    events: ['held', 'awaiting-approval', 'cancelled'] as ('held' | 'awaiting-approval' | 'cancelled')[],
    heldMinutes: 1,
  };
  const start = (name: string, extra: Record<string, unknown>) =>
    startRun(
      { client, taskQueue: worker.taskQueue },
      {
        specFile: writeSpec(ordersSpec(db.envVar, { name, partition: { by: 'range', column: 'id', size: 10_000 }, notify: [target], ...extra })),
        actor: 'test',
        notifyPollMs: 300,
      },
    );
  await db.pool.query('TRUNCATE app.orders_usd; CREATE TABLE IF NOT EXISTS app.orders_usd_b (LIKE app.orders_usd INCLUDING ALL)');
  const approval = await start('notify-canary', { validate: { canary: { partitions: 1, approve: true } } });
  // one run per target: the held run writes a table of its own
  const held = await start('notify-window', {
    target: { table: 'app.orders_usd_b', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 1_000, concurrency: 2, window: { start: hhmm(3), end: hhmm(4) } },
  });
  const told = (runId: string, event: string) => of('/ok').find((r) => r.body.run === runId && r.body.event === event);
  await waitUntil(async () => told(approval.runId, 'awaiting-approval') !== undefined, 'the canary to be told waiting', 60_000);
  expect(told(approval.runId, 'awaiting-approval')!.body.text).toMatch(/waits for approval: the canary passed \(1 partition\(s\)\); waiting for approval/);
  // held from the first look; told once a minute has passed, not before
  await waitUntil(async () => told(held.runId, 'held') !== undefined, 'the hold to be told', 120_000);
  expect(told(held.runId, 'held')!.body).toMatchObject({
    detail: { minutes: 1, reasons: [expect.stringMatching(/^outside the allowed hours \d\d:00–\d\d:00 UTC$/)] },
  });
  for (const run of [approval, held]) {
    const cancelled = await runCli(['cancel', run.runId, '--reason', 'test over', '--yes', '--database', db.envVar], { BACKFILL_TASK_QUEUE: worker.taskQueue });
    expect(cancelled.code).toBe(0);
    await waitUntil(async () => told(run.runId, 'cancelled') !== undefined, 'the cancel to be told', 60_000);
  }
  // each moment once
  const keys = of('/ok')
    .filter((r) => [approval.runId, held.runId].includes(r.body.run as string))
    .map((r) => r.key);
  expect(new Set(keys).size).toBe(keys.length);
}, 240_000);

test("a worker's BACKFILL_NOTIFY tells of runs whose spec names no one; a spec's own notify: replaces it", async () => {
  const teamWorker = await startTestWorker(uniqueQueue('notify-default'), {
    trust: { webhookUrls: [`${base}/team`] },
    notifyDefault: [{ webhook: `${base}/team`, format: 'chat', events: ['succeeded'] }],
  });
  try {
    await db.pool.query('TRUNCATE app.orders_usd');
    const spec = ordersSpec(db.envVar, { name: 'notify-default', partition: { by: 'range', column: 'id', size: 20_000 } });
    const started = await startRun({ client, taskQueue: teamWorker.taskQueue }, { specFile: writeSpec(spec), actor: 'test', notifyPollMs: 300 });
    expect((await waitForResult(started.handle)).status).toBe('succeeded');
    await waitUntil(async () => of('/team').length > 0, "the worker's default target to hear the end", 30_000);
    expect(of('/team').map((r) => r.body.text)).toEqual([expect.stringMatching(new RegExp(`^backfill: notify-default/${started.runId} succeeded: `))]);
    // named in the spec: only the spec's targets
    const own = ordersSpec(db.envVar, {
      name: 'notify-own',
      partition: { by: 'range', column: 'id', size: 20_000 },
      notify: [{ channel: 'backfill_events_own', events: ['succeeded'] }],
    });
    const second = await startRun({ client, taskQueue: teamWorker.taskQueue }, { specFile: writeSpec(own), actor: 'test', notifyPollMs: 300 });
    expect((await waitForResult(second.handle)).status).toBe('succeeded');
    await waitUntil(
      async () =>
        (await db.pool.query("SELECT count(*)::int AS n FROM backfill.notifications WHERE run_id = $1 AND status = 'delivered'", [second.runId])).rows[0].n > 0,
      "the spec's own target to be told",
      30_000,
    );
    expect(of('/team')).toHaveLength(1);
  } finally {
    await teamWorker.stop();
  }
}, 120_000);
