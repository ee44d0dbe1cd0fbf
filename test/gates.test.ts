/**
 * Proof before expansion and before success: a canary of partitions runs first and must pass
 * its gates (the transform recomputed and compared, declared invariants) before anything else
 * is written; the whole-run check catches what per-chunk checks cannot (a row changed after
 * its chunk committed); `verify` pinpoints a corrupted row days later.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { approveRun, controlRun, findRun, statusReportFor, verifyRun, waitForResult } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import type { RunProgress } from '../src/domain/types';
import { progressQuery } from '../src/workflows/messages';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, ordersSpec, TRANSFORM_SQL, writeModule } from './helpers/orders';
import { waitUntil } from './helpers/wait';
import { FINAL_SAMPLE, sampleSlice } from '../src/gates/gate-checks';

const env = useTestEnvironment('gates', { rows: 30_000 });

/** ids run to ~90,000: ten partitions of 10,000 ids (the last one aligned past the end). */
const partition = { by: 'range' as const, column: 'id', size: 10_000 };

/** The invariant a careful author writes: amount_usd is the source amount at the source's rate, to the cent. */
const AMOUNT_MATCHES_RATE = {
  name: 'amount-matches-rate',
  sql: `SELECT s.id FROM source_rows s LEFT JOIN app.fx f USING (currency) JOIN app.orders_usd t ON t.id = s.id
         WHERE t.amount_usd IS DISTINCT FROM round(s.amount_cents * f.usd_rate / 100.0, 2)`,
};

async function gateRows(runId: string) {
  const { rows } = await env.db.pool.query<{
    stage: string;
    gate: string;
    partition_id: string | null;
    passed: boolean;
    violations: string;
    examples: string | null;
  }>('SELECT stage, gate, partition_id, passed, violations, examples FROM backfill.gate_results WHERE run_id = $1 ORDER BY id', [runId]);
  return rows;
}

/** Held, and the ledger says so (the workflow decides first, then writes the ledger). */
const held = (p: RunProgress) => p.canary?.phase === 'held' && p.status === 'paused';

afterEach(async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
});

test('a transform off by one cent on some rows fails its canary on an invariant; nothing beyond the canary is written, and the run holds until cancelled', async () => {
  const wrong = TRANSFORM_SQL.replace('AS amount_usd', '+ CASE WHEN c.id % 50 = 0 THEN 0.01 ELSE 0 END AS amount_usd');
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-wrong-cent',
      partition,
      transform: { name: 'orders-usd', version: 2, sql: wrong },
      validate: { canary: { partitions: 3 }, invariants: [AMOUNT_MATCHES_RATE] },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to hold the run', 60_000);
  const progress = await started.handle.query(progressQuery);
  expect(progress.canary!.partitions).toEqual(['id:000000000-000010000', 'id:000050000-000060000', 'id:000090000-000100000']);
  expect(progress.canary!.held).toMatch(/the canary failed .*invariant amount-matches-rate: partition id:000000000-000010000: \d+ violating row\(s\)/);
  expect(progress.status).toBe('paused');
  // only the canary's partitions were written
  const { rows } = await env.db.pool.query<{ outside: number; inside: number }>(
    `SELECT count(*) FILTER (WHERE NOT (id < 10000 OR id BETWEEN 50000 AND 59999 OR id >= 90000))::int AS outside, count(*)::int AS inside FROM app.orders_usd`,
  );
  expect(rows[0]).toMatchObject({ outside: 0 });
  expect(rows[0].inside).toBeGreaterThan(0);
  // the violating keys are in the ledger, and status shows why the run holds
  const gates = await gateRows(started.runId);
  const failed = gates.filter((g) => g.stage === 'canary' && !g.passed && g.partition_id);
  expect(failed.map((g) => g.gate)).toEqual(['invariant:amount-matches-rate', 'invariant:amount-matches-rate', 'invariant:amount-matches-rate']);
  expect(failed[0].examples).toMatch(/\{"id":\d+\}/);
  const run = await findRun(env.db.pool, started.runId, env.db.envVar);
  expect(renderStatus(await statusReportFor(env.db.pool, started.runId))).toMatch(/PAUSED \(held: the canary failed \(3 problem\(s\)/);
  // resume does not lift a canary hold; cancel ends the run with nothing more written
  await expect(controlRun({ client: env.client, pool: env.db.pool }, run, 'resume', { actor: 'test' })).rejects.toThrow(/held by its canary, not paused/);
  await controlRun({ client: env.client, pool: env.db.pool }, run, 'cancel', { actor: 'test', reason: 'wrong transform' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('cancelled');
  const { rows: after } = await env.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM app.orders_usd');
  expect(after[0].n).toBe(rows[0].inside);
});

test('a passing canary that needs approval holds until a person approves, with who and why recorded; then the run expands and succeeds', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-approve',
      partition,
      validate: { canary: { partitions: 2, approve: true }, invariants: [AMOUNT_MATCHES_RATE] },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to wait for approval', 60_000);
  expect((await started.handle.query(progressQuery)).canary!.held).toMatch(/the canary passed \(2 partition\(s\)\); waiting for approval: backfill approve/);
  const run = await findRun(env.db.pool, started.runId, env.db.envVar);
  await expect(approveRun({ client: env.client }, run, { actor: 'test' })).rejects.toThrow(/needs --reason/);
  await approveRun({ client: env.client }, run, { actor: 'alice', reason: 'canary numbers checked against finance' });
  await expect(approveRun({ client: env.client }, run, { actor: 'alice', reason: 'again' })).rejects.toThrow(
    /is not waiting for approval \(its canary is approved\)/,
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  const { rows: events } = await env.db.pool.query('SELECT kind, actor, reason FROM backfill.run_events WHERE run_id = $1 AND kind IN ($2, $3)', [
    started.runId,
    'canary-passed',
    'approved',
  ]);
  expect(events).toEqual([
    expect.objectContaining({ kind: 'canary-passed', actor: 'backfill' }),
    { kind: 'approved', actor: 'alice', reason: 'canary numbers checked against finance' },
  ]);
  const final = (await gateRows(started.runId)).filter((g) => g.stage === 'final' && g.partition_id === null);
  expect(final.map((g) => [g.gate, g.passed])).toEqual(
    expect.arrayContaining([
      ['compare', true],
      ['invariant:amount-matches-rate', true],
    ]),
  );
});

test('a row changed after its chunk committed fails the whole-run check, and verify pinpoints it by key', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-final',
      partition,
      validate: { canary: { partitions: 1, approve: true }, finalCheck: 'all' },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to wait for approval', 60_000);
  // the application (or anyone) changes a row the canary wrote, after its chunk committed
  const { rows: victim } = await env.db.pool.query<{ id: string }>(
    'UPDATE app.orders_usd SET amount_usd = amount_usd + 1 WHERE id = (SELECT min(id) FROM app.orders_usd WHERE amount_usd IS NOT NULL) RETURNING id',
  );
  const run = await findRun(env.db.pool, started.runId, env.db.envVar);
  await approveRun({ client: env.client }, run, { actor: 'test', reason: 'go' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  const finished = await findRun(env.db.pool, started.runId, env.db.envVar);
  expect(finished.last_error).toMatch(/the final check failed: compare \(1 row\(s\)\); the keys are in the ledger/);
  const failed = (await gateRows(started.runId)).filter((g) => g.stage === 'final' && !g.passed && g.partition_id);
  expect(failed).toHaveLength(1);
  expect(failed[0].examples).toContain(`keys: ${victim[0].id};`);

  const report = await verifyRun(env.db.pool, finished);
  expect(report.clean).toBe(false);
  const wrong = report.partitions.filter((p) => p.wrong > 0);
  expect(wrong.map((p) => [p.id, p.wrong, p.comparison!.examples])).toEqual([['id:000000000-000010000', 1, [victim[0].id]]]);
  expect(wrong[0].comparison!.ranges[0]).toMatch(/^id in /);
  // repaired, verify is clean
  await env.db.pool.query('UPDATE app.orders_usd SET amount_usd = amount_usd - 1 WHERE id = $1', [victim[0].id]);
  expect((await verifyRun(env.db.pool, finished, { partition: 'id:000000000-000010000' })).clean).toBe(true);
});

test('a ramp releases the plan in stages; a stage whose partitions break an invariant holds the run with nothing beyond it written, and approving lets it go on to fail at the end', async () => {
  // wrong only from id 50,000 on: the first stage (ids below 30,000) is right, the second is not
  const wrong = TRANSFORM_SQL.replace('AS amount_usd', '+ CASE WHEN c.id >= 50000 AND c.id % 50 = 0 THEN 0.01 ELSE 0 END AS amount_usd');
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-ramp',
      partition,
      transform: { name: 'orders-usd', version: 4, sql: wrong },
      validate: { ramp: ['30%', '60%'], invariants: [AMOUNT_MATCHES_RATE] },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(
    async () => {
      const p = await started.handle.query(progressQuery);
      return p.ramp?.phase === 'held' && p.status === 'paused';
    },
    'the second ramp stage to hold the run',
    60_000,
  );
  const progress = await started.handle.query(progressQuery);
  expect(progress.ramp).toMatchObject({ stage: 2, stages: 3 });
  expect(progress.ramp!.held).toMatch(
    /ramp stage 2 \(the plan's first 6 partitions\) failed its gates .*invariant amount-matches-rate: partition id:000050000-000060000/,
  );
  const { rows } = await env.db.pool.query<{ beyond: number; pending: number }>(
    "SELECT (SELECT count(*)::int FROM app.orders_usd WHERE id >= 60000) AS beyond, (SELECT count(*)::int FROM backfill.partitions WHERE run_id = $1 AND status = 'pending') AS pending",
    [started.runId],
  );
  expect(rows[0]).toEqual({ beyond: 0, pending: 4 });
  const stages = (await gateRows(started.runId)).filter((g) => g.stage === 'ramp' && g.partition_id === null).map((g) => [g.gate, g.passed]);
  expect(stages).toEqual(
    expect.arrayContaining([
      ['stage 1: compare', true],
      ['stage 1: invariant:amount-matches-rate', true],
      ['stage 2: invariant:amount-matches-rate', false],
    ]),
  );

  const run = await findRun(env.db.pool, started.runId, env.db.envVar);
  await expect(controlRun({ client: env.client, pool: env.db.pool }, run, 'resume', { actor: 'test' })).rejects.toThrow(/held by a ramp stage, not paused/);
  await approveRun({ client: env.client }, run, { actor: 'bob', reason: 'known issue, fixed downstream' });
  const result = await waitForResult(started.handle);
  // approval lets the run finish its scope, never skip its final check
  expect(result.status).toBe('failed');
  expect((await findRun(env.db.pool, started.runId, env.db.envVar)).last_error).toMatch(/the final check failed: .*invariant:amount-matches-rate/);
});

test('the default final check reads a slice of every partition, and a row changed inside a slice fails the run', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-slice',
      partition,
      validate: { canary: { partitions: 1, approve: true } },
      limits: { chunkSize: 1000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to wait for approval', 60_000);
  // the slice the final check will read in the canary's partition, from the chunk log
  const slice = await sampleSlice(env.db.pool, started.runId, 'id:000000000-000010000', FINAL_SAMPLE);
  expect(slice.rows).toBeGreaterThanOrEqual(64);
  const { rows: victim } = await env.db.pool.query<{ id: string }>(
    `UPDATE app.orders_usd SET amount_usd = amount_usd + 1
      WHERE id = (SELECT min(t.id) FROM app.orders_usd t JOIN app.orders o USING (id) WHERE t.id > $1 AND t.id < 10000 AND t.amount_usd IS NOT NULL AND o.status <> 'void') RETURNING id`,
    [slice.cursor ?? -1],
  );
  await approveRun({ client: env.client }, await findRun(env.db.pool, started.runId, env.db.envVar), { actor: 'test', reason: 'go' });
  expect((await waitForResult(started.handle)).status).toBe('failed');
  const final = (await gateRows(started.runId)).filter((g) => g.stage === 'final' && g.gate === 'compare');
  expect(final.find((g) => g.partition_id === null)).toMatchObject({ passed: false, violations: '1' });
  expect(final.find((g) => g.partition_id === 'id:000000000-000010000')!.examples).toContain(`keys: ${victim[0].id};`);
  // the slice is about 1/16 of the rows, not all of them
  const { rows } = await env.db.pool.query(
    "SELECT rows_checked::int AS n FROM backfill.gate_results WHERE run_id = $1 AND stage = 'final' AND gate = 'compare' AND partition_id IS NULL",
    [started.runId],
  );
  const { rows: all } = await env.db.pool.query("SELECT count(*)::int AS n FROM app.orders WHERE status <> 'void'");
  expect(rows[0].n).toBeLessThan(all[0].n / 8);
});

/** How many lanes the whole-run check scheduled, and the attempt number of each lane attempt that started. */
function laneAttempts(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): { lanes: number; attempts: number[] } {
  const lanes = new Set(
    history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkFinalLane').map((e) => String(e.eventId)),
  );
  const attempts = history.events!.filter(
    (e) => e.activityTaskStartedEventAttributes && lanes.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)),
  );
  return { lanes: lanes.size, attempts: attempts.map((e) => e.activityTaskStartedEventAttributes!.attempt!) };
}

test('a check the database refuses the same way every time fails the run at once, saying why, instead of being retried for minutes', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-refused',
      partition,
      // compiles at plan (EXPLAIN runs nothing), divides by zero when the final check runs it
      validate: { invariants: [{ name: 'divides-by-zero', sql: 'SELECT s.id FROM source_rows s WHERE s.id / (s.id - s.id) > 0' }] },
      limits: { chunkSize: 5000, concurrency: 4 },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  expect(result.partitions.succeeded).toBe(result.partitions.total);
  const finished = await findRun(env.db.pool, started.runId, env.db.envVar);
  expect(finished.last_error).toContain('the final check could not complete: the final check was refused by the database: division by zero (SQLSTATE 22012)');
  // one attempt: the partitions' invariants run in the check's lanes, and the lane that met the
  // error failed for good on its first try (the others were cancelled, none retried)
  const history = await started.handle.fetchHistory();
  const { lanes, attempts } = laneAttempts(history);
  expect(lanes).toBe(4);
  expect(attempts.length).toBeGreaterThan(0);
  expect(attempts.every((a) => a === 1)).toBe(true);
  expect(history.events!.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkFinal')).toBe(false);
});

test('a TypeScript transform that throws when the final check recomputes it fails the run at once, its row value kept out of Temporal', async () => {
  // the transform refuses a sentinel amount, naming the row: the source gets one after the canary's chunks
  const module = writeModule(
    'refuses-sentinel',
    `interface Order { id: string; tenant: number; created_at: string; amount_cents: string | null }
    export default {
      columns: ['id', 'tenant', 'created_at', 'amount_usd'],
      reads: ['id', 'tenant', 'created_at', 'amount_cents'],
      version: 1,
      transform(rows: Order[]) {
        return rows.map((r) => {
          if (r.amount_cents === '-7') throw new RangeError('order ' + r.id + ' has amount -7');
          return { id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: r.amount_cents };
        });
      },
    };\n`,
  );
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-throws',
      partition,
      transform: { name: 'refuses-sentinel', version: 1, module },
      validate: { canary: { partitions: 1, approve: true }, finalCheck: 'all' },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to wait for approval', 60_000);
  const { rows: victim } = await env.db.pool.query<{ id: string; was: string | null }>(
    "SELECT id, amount_cents AS was FROM app.orders WHERE id = (SELECT min(id) FROM app.orders WHERE id > 100 AND status <> 'void')",
  );
  await env.db.pool.query('UPDATE app.orders SET amount_cents = -7 WHERE id = $1', [victim[0].id]);
  await approveRun({ client: env.client }, await findRun(env.db.pool, started.runId, env.db.envVar), { actor: 'test', reason: 'go' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  expect(result.partitions.succeeded).toBe(result.partitions.total);
  const finished = await findRun(env.db.pool, started.runId, env.db.envVar);
  expect(finished.last_error).toContain('the final check could not complete: the final check could not recompute: transform refuses-sentinel@1');
  expect(finished.last_error).toContain('threw RangeError');
  // one attempt of each lane, and the row's key nowhere in the run's history
  const history = await started.handle.fetchHistory();
  const { lanes, attempts } = laneAttempts(history);
  expect(lanes).toBeGreaterThan(0);
  expect(attempts.filter((a) => a > 1)).toEqual([]);
  expect(JSON.stringify(history)).not.toContain(`order ${victim[0].id}`);
  await env.db.pool.query('UPDATE app.orders SET amount_cents = $2 WHERE id = $1', [victim[0].id, victim[0].was]);
});

test('the whole-run check runs in one lane per concurrency slot: wrong rows in partitions of two lanes are both found, and every row is counted once', async () => {
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'gates-lanes',
      partition,
      // the canary is the first and the last partition (ordinals 0 and 9): lanes 0 and 1 of 4
      validate: { canary: { partitions: 2, approve: true }, finalCheck: 'all' },
      limits: { chunkSize: 2000, concurrency: 4 },
    }),
  );
  await waitUntil(async () => held(await started.handle.query(progressQuery)), 'the canary to wait for approval', 60_000);
  const { rows: victims } = await env.db.pool.query<{ id: string }>(
    `UPDATE app.orders_usd SET amount_usd = amount_usd + 1
      WHERE id IN ((SELECT min(id) FROM app.orders_usd WHERE amount_usd IS NOT NULL AND id < 10000),
                   (SELECT max(id) FROM app.orders_usd WHERE amount_usd IS NOT NULL AND id >= 90000)) RETURNING id`,
  );
  expect(victims).toHaveLength(2);
  await approveRun({ client: env.client }, await findRun(env.db.pool, started.runId, env.db.envVar), { actor: 'test', reason: 'go' });
  expect((await waitForResult(started.handle)).status).toBe('failed');

  const final = (await gateRows(started.runId)).filter((g) => g.stage === 'final' && g.gate === 'compare');
  expect(final.filter((g) => g.partition_id !== null && !g.passed).map((g) => g.partition_id)).toEqual(
    expect.arrayContaining(['id:000000000-000010000', 'id:000090000-000100000']),
  );
  expect(final.find((g) => g.partition_id === null)).toMatchObject({ passed: false, violations: '2' });
  const { rows } = await env.db.pool.query(
    "SELECT rows_checked::int AS n FROM backfill.gate_results WHERE run_id = $1 AND stage = 'final' AND gate = 'compare' AND partition_id IS NULL",
    [started.runId],
  );
  const { rows: all } = await env.db.pool.query("SELECT count(*)::int AS n FROM app.orders WHERE status <> 'void'");
  expect(rows[0].n).toBe(all[0].n);
  const history = await started.handle.fetchHistory();
  const lanes = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkFinalLane');
  expect(lanes).toHaveLength(4);
});
