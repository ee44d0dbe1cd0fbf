/**
 * The two moments the first notifications test leaves out (docs/operating.md "Told when a run needs you"): a
 * run that pauses itself — its canary failed an invariant — and a revert, told as `reverted` by the
 * revert run's own notifier (it carries the spec's `notify:`), each once; a webhook off the worker's
 * allow-list is refused for each, and the refusal recorded.
 */
import { waitForResult } from '../src/operations';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, TRANSFORM_SQL } from './helpers/orders';
import { waitUntil } from './helpers/wait';

// the environment's worker has no BACKFILL_WEBHOOK_URLS: a webhook target is refused (and says so), a channel is delivered
const env = useTestEnvironment('notifyundo', { rows: 12_000 });
const HOOK = 'https://hooks.example.com/backfill';

test('a canary that fails an invariant pauses the run, and that is told; a revert is told as reverted', async () => {
  const notify = [
    { channel: 'backfill_notify_undo' },
    { webhook: HOOK, events: ['paused', 'succeeded', 'reverted'] as ('paused' | 'succeeded' | 'reverted')[] },
  ];
  const wrong = TRANSFORM_SQL.replace('AS amount_usd', '+ 0.01 AS amount_usd');
  const canary = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'notify-canary-fails',
      partition: { by: 'range', column: 'id', size: 10_000 },
      transform: { name: 'orders-usd', version: 2, sql: wrong },
      validate: {
        canary: { partitions: 1 },
        invariants: [
          {
            name: 'amount-matches',
            sql: "SELECT t.id FROM app.orders_usd t JOIN source_rows s USING (id) WHERE t.amount_usd IS DISTINCT FROM round(s.amount_cents / 100.0, 2) AND s.currency = 'USD'",
          },
        ],
      },
      notify,
    }),
    { notifyPollMs: 300 },
  );
  await waitUntil(
    async () =>
      (await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.notifications WHERE run_id = $1 AND kind = 'paused'", [canary.runId])).rows[0].n >= 2,
    'the pause to be told to both targets',
    60_000,
  );
  const paused = (
    await env.db.pool.query("SELECT target, status, last_error FROM backfill.notifications WHERE run_id = $1 AND kind = 'paused' ORDER BY target", [
      canary.runId,
    ])
  ).rows;
  expect(paused).toEqual([
    { target: '#1 channel backfill_notify_undo', status: 'delivered', last_error: null },
    {
      target: '#2 webhook https://hooks.example.com',
      status: 'refused',
      last_error: expect.stringMatching(/not on this worker's BACKFILL_WEBHOOK_URLS \(empty\)/),
    },
  ]);
  expect(
    (await runCli(['cancel', canary.runId, '--reason', 'wrong transform', '--yes', '--database', env.db.envVar], { BACKFILL_TASK_QUEUE: env.worker.taskQueue }))
      .code,
  ).toBe(0);
  await waitForResult(canary.handle).catch(() => undefined);
  await env.db.pool.query('TRUNCATE app.orders_usd');

  // a run that succeeds, then its revert
  const spec = ordersSpec(env.db.envVar, { name: 'notify-reverted', partition: { by: 'range', column: 'id', size: 20_000 }, notify });
  const run = await env.start(spec, { notifyPollMs: 300 });
  expect((await waitForResult(run.handle)).status).toBe('succeeded');
  const reverted = await runCli(['revert', run.runId, '--reason', 'undo the test', '--yes', '--wait', '--database', env.db.envVar], {
    BACKFILL_TASK_QUEUE: env.worker.taskQueue,
  });
  expect(reverted.code).toBe(0);
  const revertRun = (await env.db.pool.query('SELECT run_id FROM backfill.runs WHERE reverts = $1', [run.runId])).rows[0].run_id as string;
  await waitUntil(
    async () =>
      (await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.notifications WHERE run_id = $1 AND kind = 'reverted'", [revertRun])).rows[0].n >= 2,
    'the revert to be told',
    60_000,
  );
  const kinds = (
    await env.db.pool.query("SELECT kind, count(*)::int AS n FROM backfill.notifications WHERE run_id = $1 AND status = 'delivered' GROUP BY kind", [revertRun])
  ).rows;
  // its end is told as reverted, never as succeeded
  expect(kinds).toEqual([{ kind: 'reverted', n: 1 }]);
}, 180_000);
