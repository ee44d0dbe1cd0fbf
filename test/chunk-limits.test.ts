/**
 * A chunk's statements run under the spec's limits, SET LOCAL in the chunk's own
 * transaction. Faults that retrying cannot cure are not retried as if transient: a
 * statement timeout halves the chunk (down to a floor, then fails the partition with what
 * to do), and a full disk pauses the run for an operator instead of burning retries.
 */
import { controlRun, statusReportFor, waitForResult } from '../src/operations';
import { migrateLedger } from '../src/ledger/migrate';
import { getRun } from '../src/ledger/runs';
import { pollUntil } from '../src/util/poll-until';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('limits', { rows: 300 });

/** pg_sleep is volatile: declared, so the spec is accepted and the run records it. */
const sleepingTransform = (seconds: number) => ({
  name: 'slow',
  version: 1,
  allowVolatile: true,
  sql: `SELECT c.id, c.tenant, c.created_at, (c.amount_cents + 0 * length(pg_sleep(${seconds})::text))::numeric(14,2) AS amount_usd FROM chunk c`,
});

test('a chunk that hits limits.statementTimeoutSeconds is tried at half its size, until it fits', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'shrinking-chunks',
      source: { table: 'app.orders', key: 'id', where: "status <> 'void' AND id < 150" },
      partition: { by: 'range', column: 'id', size: 1_000_000 },
      // 0.05 s a row: chunks of 100 and 50 take 5 and 2.5 s, 25 take 1.25 s, 12 take 0.6 s
      transform: sleepingTransform(0.05),
      limits: { chunkSize: 100, concurrency: 1, statementTimeoutSeconds: 1 },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const { rows } = await env.db.pool.query<{ chunk_size: number; governed_by: string }>(
    'SELECT DISTINCT chunk_size, governed_by FROM backfill.chunks WHERE run_id = $1',
    [started.runId],
  );
  expect(rows).toEqual([{ chunk_size: 12, governed_by: 'statementTimeoutSeconds' }]);
  const { rows: target } = await env.db.pool.query("SELECT count(*)::int AS n FROM app.orders WHERE status <> 'void' AND id < 150");
  expect(result.rowsWritten).toBe(target[0].n);
});

test('a chunk that times out even at the floor fails its partition, saying which limit and what to do', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'slow-transform',
      partition: { by: 'range', column: 'id', size: 1_000_000 },
      transform: sleepingTransform(0.6),
      limits: { chunkSize: 32, concurrency: 1, statementTimeoutSeconds: 1 },
    }),
  );
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  const { rows } = await env.db.pool.query<{ last_error: string; status: string; rows_written: string }>(
    'SELECT last_error, status, rows_written FROM backfill.partitions WHERE run_id = $1',
    [started.runId],
  );
  expect(rows).toEqual([
    {
      status: 'failed',
      rows_written: '0',
      last_error: expect.stringMatching(
        /^partition id:000000000-001000000 failed at id in \[0, \d+\]: a statement was cancelled after running up to limits\.statementTimeoutSeconds \(1 s\) even in chunks of 2 rows, or by an operator; lower limits\.chunkSize or raise the timeout, then: backfill retry-failed /,
      ),
    },
  ]);
  const { rows: shape } = await env.db.pool.query('SELECT shape FROM backfill.runs WHERE run_id = $1', [started.runId]);
  expect(shape[0].shape.transformReads.volatile).toEqual(['pg_sleep (pg_sleep(double precision))']);
});

test('a lock held longer than the statement timeout makes the partition hold, not shrink its chunks', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const blocker = await env.db.pool.connect();
  try {
    await blocker.query('BEGIN; LOCK TABLE app.orders_usd IN SHARE ROW EXCLUSIVE MODE');
    const started = await env.start(
      ordersSpec(env.db.envVar, {
        name: 'locked-target',
        partition: { by: 'range', column: 'id', size: 1_000_000 },
        limits: { chunkSize: 64, concurrency: 1, statementTimeoutSeconds: 1 },
      }),
    );
    // three statement timeouts' worth of waiting: were lock waits cancelled as slow statements, the chunks would shrink to 8 rows
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await blocker.query('ROLLBACK');
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');
    const { rows } = await env.db.pool.query<{ governed_by: string; smallest: number }>(
      'SELECT governed_by, min(chunk_size) AS smallest FROM backfill.chunks WHERE run_id = $1 GROUP BY governed_by',
      [started.runId],
    );
    expect(rows).toEqual([{ governed_by: 'chunkSize', smallest: 64 }]);
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    blocker.release();
  }
});

test('a full disk pauses the run with the reason instead of retrying; once resumed, the run completes exact', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  // a stand-in for ENOSPC: the target refuses writes with SQLSTATE 53100 (disk_full)
  await env.db.pool.query(`
    CREATE FUNCTION app.disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
    CREATE TRIGGER disk_full BEFORE INSERT ON app.orders_usd FOR EACH ROW EXECUTE FUNCTION app.disk_full()`);
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'disk-full', partition: { by: 'range', column: 'id', size: 1_000_000 } }));
  const paused = await pollUntil(async () => ((await getRun(env.db.pool, started.runId))?.paused ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
  expect(paused).toBe(true);
  const report = await statusReportFor(env.db.pool, started.runId);
  expect(report.events).toContainEqual(
    expect.objectContaining({
      kind: 'paused',
      actor: 'backfill',
      reason: expect.stringContaining(
        'the database cannot write: could not extend file: No space left on device (SQLSTATE 53100); free space, then: backfill resume',
      ),
    }),
  );
  const { rows } = await env.db.pool.query('SELECT attempts FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  // a few attempts while the pause lands, never the hundred retries a transient error gets
  expect(rows[0].attempts).toBeLessThanOrEqual(5);

  await env.db.pool.query('DROP TRIGGER disk_full ON app.orders_usd');
  await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, started.runId))!, 'resume', { actor: 'test', reason: 'space freed' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const { rows: written } = await env.db.pool.query('SELECT count(*)::int AS n FROM app.orders_usd');
  expect(written[0].n).toBe(result.rowsWritten);
});

test("a partition's chunks commit without waiting for the disk, except its last, which flushes them all; flushEveryChunk makes every commit wait, as a commitMs guard does unless the spec says otherwise", async () => {
  // seen from inside each chunk's own COMMIT: a deferred constraint trigger on the chunk log
  // fires during the commit, after the chunk's last SET LOCAL, and notes the setting in force
  await migrateLedger(env.db.pool);
  await env.db.pool.query(`
    CREATE TABLE app.commit_settings (run_id text, seq int, synchronous_commit text);
    CREATE FUNCTION app.note_commit_setting() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
      BEGIN INSERT INTO app.commit_settings VALUES (NEW.run_id, NEW.seq, current_setting('synchronous_commit')); RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER note_commit_setting AFTER INSERT ON backfill.chunks DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION app.note_commit_setting()`);
  try {
    // a guard that never slows the run: only whether it is there matters here
    const commitGuard = { guards: { commitMs: { soft: 60_000, hard: 120_000 } } };
    const settings = async (flushEveryChunk?: boolean, guarded = false) => {
      await env.db.pool.query('TRUNCATE app.orders_usd');
      const limits = { chunkSize: 64, concurrency: 1, ...(flushEveryChunk === undefined ? {} : { flushEveryChunk }), ...(guarded ? commitGuard : {}) };
      // 150 rows (ids up to 450) in chunks of 64: two full chunks, then a short one that finishes the partition
      const started = await env.start(
        ordersSpec(env.db.envVar, {
          name: `commit-${flushEveryChunk ?? 'default'}${guarded ? '-guarded' : ''}`,
          source: { table: 'app.orders', key: 'id', where: 'id <= 450' },
          partition: { by: 'range', column: 'id', size: 1_000_000 },
          limits,
        }),
      );
      expect((await waitForResult(started.handle)).status).toBe('succeeded');
      const { rows } = await env.db.pool.query<{ seq: number; synchronous_commit: string }>(
        'SELECT seq, synchronous_commit FROM app.commit_settings WHERE run_id = $1 ORDER BY seq',
        [started.runId],
      );
      return rows.map((r) => `${r.seq}:${r.synchronous_commit}`);
    };
    expect(await settings()).toEqual(['1:off', '2:off', '3:on']);
    expect(await settings(true)).toEqual(['1:on', '2:on', '3:on']);
    // the guard times a durable commit before each chunk: after one that did not wait, it would time that chunk's flush
    expect(await settings(undefined, true)).toEqual(['1:on', '2:on', '3:on']);
    expect(await settings(false, true)).toEqual(['1:off', '2:off', '3:on']);
  } finally {
    await env.db.pool.query('DROP TRIGGER note_commit_setting ON backfill.chunks; DROP FUNCTION app.note_commit_setting(); DROP TABLE app.commit_settings');
  }
});
