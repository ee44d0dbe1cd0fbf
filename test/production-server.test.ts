/**
 * The deployment the README recommends, not the dev server: Temporal's own server on PostgreSQL
 * persistence with SQL visibility (the version docker-compose.yml pins, built by the global
 * setup), its databases set up by deploy/temporal-schema.sh and its dynamic config read from
 * deploy/dynamicconfig — the script and file compose uses. The namespace is made by an admin step
 * and holds no search attribute. On it: the first `backfill start` succeeds and runs exact; a run
 * survives the whole server SIGKILLed and started again, and a worker process SIGKILLed (worker
 * processes connect as the least-privilege role, BACKFILL_REQUIRE_LEAST_PRIVILEGE=1); and on
 * the server run as four services (frontend, history, matching, worker in their own processes), a
 * run survives its history service and then its frontend SIGKILLed and started again. Each run is
 * exact against the one-statement reference, with the ledger audited as in the chaos matrix.
 * Upgrades (patches, Worker Versioning) and the Web UI: production-upgrade.test.ts.
 */
import { startRun, waitForResult } from '../src/operations';
import { runCli } from './helpers/cli';
import { partitionStarts } from './helpers/histories';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, writeSpec } from './helpers/orders';
import {
  audit,
  bringUp,
  describeWithServer,
  EXACT,
  finalStatus,
  pause,
  slowOrdersSpec,
  spawnWorkerProcess,
  startSlowRun,
  untilRowsRead,
  untilServed,
  type Deployment,
} from './helpers/production';
import { uniqueQueue } from './helpers/temporal';
import { uniqueName } from './helpers/unique';
import { createRunnerRole, dropRunnerRole } from './helpers/least-privilege-role';

const env = useTestEnvironment('prodserver', { rows: 40_000, worker: false });
// worker processes connect as the documented least-privilege role, and refuse anything more
const role = uniqueName('bf_prodserver');
let runnerUrl: string;
beforeAll(async () => {
  runnerUrl = await createRunnerRole(env.db, role);
});
afterAll(() => dropRunnerRole(role));

describeWithServer('on the production Temporal server as one process', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await bringUp(false);
  }, 240_000);
  afterAll(() => d?.down());

  test('the first start on the admin-made namespace registers the search attributes and runs exact', async () => {
    const listed = await d.client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(listed.customAttributes ?? {})).toEqual([]);
    const started = await runCli(['start', writeSpec(ordersSpec(env.db.envVar, { name: 'prod-first' })), '--wait'], {
      TEMPORAL_ADDRESS: d.server.address,
      BACKFILL_TASK_QUEUE: d.taskQueue,
    });
    expect(started.stderr).not.toMatch(/Failed to start Workflow/);
    expect(started.code).toBe(0);
    const { rows } = await env.db.pool.query("SELECT run_id, workflow_id, partitions_total FROM backfill.runs WHERE name = 'prod-first'");
    expect(await audit(env.db, rows[0].run_id)).toEqual(EXACT);
    // compose's dynamic config allows eager workflow start: each partition's first workflow task
    // came back to the worker that started it, in the start's reply
    const history = await d.client.workflow.getHandle(rows[0].workflow_id).fetchHistory();
    expect(partitionStarts(history)).toEqual(Array(rows[0].partitions_total).fill({ partitionRunId: expect.any(String), eagerlyStarted: true }));
  });

  test('a run survives the whole server SIGKILLed and started again, exact, the ledger consistent', async () => {
    const run = await startSlowRun(env.db, d.client, d.taskQueue, 'prod-restart');
    await untilRowsRead(env.db, run.runId, 8_000);
    await d.server.kill();
    await pause(3000);
    await d.server.start();
    expect(await finalStatus(env.db, run.runId)).toBe('succeeded');
    expect((await waitForResult(run.handle)).status).toBe('succeeded');
    expect(await audit(env.db, run.runId)).toEqual(EXACT);
  });
  test('a run survives a worker process SIGKILLed mid-partition (as deployed: dist/worker.js), exact, the ledger consistent', async () => {
    const queue = uniqueQueue('prodkill');
    const spawnWorker = () => spawnWorkerProcess({ address: d.server.address, taskQueue: queue, db: env.db, runnerUrl });
    const processes = [spawnWorker(), spawnWorker()];
    try {
      await env.db.pool.query('TRUNCATE app.orders_usd');
      await untilServed(d.client, queue, env.db);
      const spec = slowOrdersSpec(env.db, 'prod-worker-kill');
      const run = await startRun({ client: d.client, taskQueue: queue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
      await untilRowsRead(env.db, run.runId, 8_000);
      const killed = new Promise((resolve) => processes[0].once('exit', resolve));
      processes[0].kill('SIGKILL');
      await killed;
      processes.push(spawnWorker());
      expect(await finalStatus(env.db, run.runId)).toBe('succeeded');
      expect(await audit(env.db, run.runId)).toEqual(EXACT);
    } finally {
      for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
  });
});

describeWithServer('on the production Temporal server as four services', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await bringUp(true);
  }, 240_000);
  afterAll(() => d?.down());

  test('a run survives its history service SIGKILLed, then its frontend, each started again: exact, the ledger consistent', async () => {
    const run = await startSlowRun(env.db, d.client, d.taskQueue, 'prod-services');
    await untilRowsRead(env.db, run.runId, 8_000);
    await d.server.kill('history');
    await pause(3000);
    await d.server.start('history');
    await untilRowsRead(env.db, run.runId, 20_000);
    await d.server.kill('frontend');
    await pause(3000);
    await d.server.start('frontend');
    expect(await finalStatus(env.db, run.runId)).toBe('succeeded');
    expect((await waitForResult(run.handle)).status).toBe('succeeded');
    expect(await audit(env.db, run.runId)).toEqual(EXACT);
  });
});
