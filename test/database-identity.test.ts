/**
 * Two workers on one task queue whose same-named variable points at two databases with the
 * same tables (staging and production, two shards): a run once had its registration, ledger
 * and writes land on whichever worker took the task. Now the run records the identity of the
 * database it was planned against (cluster system identifier and database OID), its work goes
 * to that database's task queue, which only workers connected to it poll, and a worker
 * connected elsewhere that is handed its work anyway gives it back: every write lands where
 * the run was planned.
 */
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { createActivities } from '../src/activities';
import { PoolRegistry } from '../src/db/pool-registry';
import { FailureType } from '../src/domain/failures';
import { startRun, waitForResult } from '../src/operations';
import { launchWorker, type RunningWorker } from '../src/worker';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { useTestEnvironment } from './helpers/environment';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { temporalAddress, uniqueQueue, workflowBundle } from './helpers/temporal';

const env = useTestEnvironment('identb', { rows: 20_000, worker: false });
const SHARED = 'BF_TEST_DB_SHARED_NAME';
const taskQueue = uniqueQueue('identity');
let other: TestDatabase;
const workers: RunningWorker[] = [];

/** A worker whose SHARED variable reaches `url`, whatever this process's environment says. */
async function workerFor(url: string, queue = taskQueue): Promise<RunningWorker> {
  const worker = await launchWorker({
    temporal: { address: temporalAddress(), namespace: 'default', taskQueue: queue },
    workflowBundle: await workflowBundle(),
    pools: new PoolRegistry({ max: 6, env: { [SHARED]: url }, databases: [SHARED] }),
    trust: { databases: [SHARED] },
    logger: pino({ level: 'silent' }),
    maxConcurrentActivities: 4,
    pausePollMs: 200,
  });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  other = await createTestDatabase('identa');
  await createOrders(other.pool, 20_000);
  // the operator's variable points at env's database; one worker agrees, one points at the other
  process.env[SHARED] = env.db.url;
  await workerFor(other.url);
  await workerFor(env.db.url);
});

afterAll(async () => {
  for (const w of workers) await w.stop();
  await other?.drop();
});

async function ledgerIn(db: TestDatabase): Promise<boolean> {
  const { rows } = await db.pool.query("SELECT to_regclass('backfill.runs') IS NOT NULL AS t");
  return rows[0].t;
}

test('every run registers and writes only in the database it was planned against, whichever worker takes its tasks', async () => {
  for (const size of [5_000, 20_000]) {
    await env.db.pool.query('TRUNCATE app.orders_usd');
    const spec = ordersSpec(SHARED, { name: `identity-${size}`, partition: { by: 'range', column: 'id', size }, limits: { chunkSize: 1000, concurrency: 4 } });
    const started = await startRun({ client: env.client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');
    expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  }
  // the other database was never touched: no ledger, no row in its target
  expect(await ledgerIn(other)).toBe(false);
  const { rows } = await other.pool.query('SELECT count(*)::int AS n FROM app.orders_usd');
  expect(rows[0].n).toBe(0);
  const { rows: recorded } = await env.db.pool.query('SELECT DISTINCT database_identity FROM backfill.runs');
  expect(recorded).toHaveLength(1);
  expect(recorded[0].database_identity).toMatch(/^\d+:\d+$/);
});

test('every activity of a registered run, its bookkeeping included, leaves a worker pointed elsewhere to retry, and writes nothing there', async () => {
  // the first test registered runs in env's database; a worker reaching `other` (no ledger) or
  // env's database under a run id it does not hold must hand the task back, never fail the run
  const { rows } = await env.db.pool.query('SELECT run_id FROM backfill.runs ORDER BY created_at LIMIT 1');
  const runId: string = rows[0].run_id;
  for (const [url, id] of [
    [other.url, runId],
    [env.db.url, 'no-such-run'],
  ]) {
    const pools = new PoolRegistry({ max: 2, env: { [SHARED]: url }, databases: [SHARED] });
    try {
      const activities = createActivities({ pools, logger: pino({ level: 'silent' }), trust: { transformDirs: [], webhookUrls: [] } });
      // registering a run (a backfill or a revert) checks the identity the starter planned against itself;
      // findWorkerGap, startPartitionWorkflow and reportPartitions ask Temporal only, and touch no database
      const temporalOnly = ['findWorkerGap', 'startPartitionWorkflow', 'reportPartitions'];
      const runScoped = Object.entries(activities).filter(([name]) => !['registerRun', 'registerRevert', ...temporalOnly].includes(name));
      expect(runScoped.length).toBeGreaterThan(10);
      for (const [name, activity] of runScoped) {
        const refused = await (activity as (input: object) => Promise<unknown>)({ database: SHARED, runId: id, partitionId: 'p', stage: 1 }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect({ name, type: (refused as ApplicationFailure)?.type, nonRetryable: (refused as ApplicationFailure)?.nonRetryable }).toEqual({
          name,
          type: FailureType.WrongDatabase,
          nonRetryable: false,
        });
        expect(refused).toBeInstanceOf(ApplicationFailure);
      }
    } finally {
      await pools.close();
    }
  }
  expect(await ledgerIn(other)).toBe(false);
});

test('with only workers connected elsewhere, start refuses before starting anything, naming the variable and how to add a worker', async () => {
  // a base queue the right worker never polled: only a worker whose variable reaches the other database
  const elsewhere = uniqueQueue('identity-elsewhere');
  await workerFor(other.url, elsewhere);
  const spec = ordersSpec(SHARED, { name: 'identity-orphan' });
  await expect(startRun({ client: env.client, taskQueue: elsewhere }, { specFile: writeSpec(spec), actor: 'test' })).rejects.toThrow(
    new RegExp(
      `^no worker serves ${SHARED} \\(task queue ${elsewhere}\\.${SHARED}\\.db-\\d+-\\d+\\): start one where ${SHARED} holds this database's URL, ` +
        `e\\.g\\. BACKFILL_DATABASES=${SHARED} backfill worker`,
    ),
  );
  expect((await env.client.workflow.count(`TaskQueue = '${elsewhere}'`)).count).toBe(0);
  expect(await ledgerIn(other)).toBe(false);
});
