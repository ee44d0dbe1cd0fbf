/**
 * Workers upgraded while a run is in flight, on the production Temporal server (see
 * production-server.test.ts), with worker processes as deployed (dist/worker.js, connecting as
 * the least-privilege role of docs/security.md with BACKFILL_REQUIRE_LEAST_PRIVILEGE=1):
 * - the patch path: every worker of build A drained (SIGTERM) mid-run and replaced by build B —
 *   a workflow change behind `patched()` and an activity change (test/helpers/worker-build.ts).
 *   B replays A's histories, takes the new path after them, and the run finishes exact;
 * - Worker Versioning: build B made current while a run pinned to A is mid-way; the run finishes
 *   on A through its continue-as-new generations, and the next run goes to B. The chunk log,
 *   `backfill status` and the Web UI (the server compose deploys, in Chromium) say which build
 *   ran what.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Frame } from 'playwright-core';
import { ensureTemporalUi, startTemporalUi } from '../src/dev/temporal-ui';
import { startRun, statusReport } from '../src/operations';
import { getRun } from '../src/ledger/runs';
import { pollUntil } from '../src/util/poll-until';
import { useTestEnvironment } from './helpers/environment';
import { createRunnerRole, dropRunnerRole } from './helpers/least-privilege-role';
import { ordersSpec, writeSpec } from './helpers/orders';
import {
  audit,
  bringUp,
  describeWithServer,
  EXACT,
  finalStatus,
  setCurrentVersion,
  slowOrdersSpec,
  spawnWorkerProcess,
  untilRowsRead,
  type Deployment,
} from './helpers/production';
import { startTestWorker, uniqueQueue } from './helpers/temporal';
import { uniqueName } from './helpers/unique';
import { BUILD_B_ACTIVITY_TAG, BUILD_B_PATCH, writeBuildB } from './helpers/worker-build';

const env = useTestEnvironment('produpgrade', { rows: 40_000, worker: false });
const role = uniqueName('bf_upgrade');
const BUILD_A = path.join(__dirname, '..', 'dist', 'worker.js');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!existsSync(CHROMIUM) && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; CI must install it (apt-get install chromium)`);

// a role that holds privileges is dropped after its database (env's afterAll, declared first)
afterAll(() => dropRunnerRole(role));

let d: Deployment;
let runnerUrl: string;
const processes: ChildProcess[] = [];

/** A worker process of a build, as a deploy starts one: the spec's database reached as the least-privilege role. */
function spawnWorker(entry: string, queue: string, identity: string): ChildProcess {
  const child = spawnWorkerProcess({ entry, address: d.server.address, taskQueue: queue, db: env.db, runnerUrl, identity });
  processes.push(child);
  return child;
}

/** SIGTERM, as a deploy stops a worker: it drains (running chunks commit) and exits. */
const drain = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

describeWithServer('workers upgraded mid-run, on the production Temporal server', () => {
  beforeAll(async () => {
    d = await bringUp(false);
    runnerUrl = await createRunnerRole(env.db, role);
  }, 240_000);
  afterAll(async () => {
    for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await d?.down();
  });

  test('the patch path: every build-A worker drained mid-run and replaced by build B (a patched workflow change, an activity change); B replays A and the run finishes exact', async () => {
    const queue = uniqueQueue('upgrade');
    const buildB = writeBuildB();
    const buildA = [spawnWorker(BUILD_A, queue, 'build-a-1'), spawnWorker(BUILD_A, queue, 'build-a-2')];
    await env.db.pool.query('TRUNCATE app.orders_usd');
    const run = await startRun(
      { client: d.client, taskQueue: queue },
      { specFile: writeSpec(slowOrdersSpec(env.db, 'upgrade-patch')), actor: 'test', partitionHeartbeatTimeoutMs: 3000 },
    );
    await untilRowsRead(env.db, run.runId, 8_000);
    // the deploy: A's workers stop, B's start; nothing of A runs after this point
    await Promise.all(buildA.map(drain));
    const { rows: cut } = await env.db.pool.query('SELECT count(*)::int AS chunks FROM backfill.chunks WHERE run_id = $1', [run.runId]);
    const buildBWorkers = [spawnWorker(buildB, queue, 'build-b-1'), spawnWorker(buildB, queue, 'build-b-2')];
    try {
      expect(await finalStatus(env.db, run.runId)).toBe('succeeded');
      expect(await audit(env.db, run.runId)).toEqual(EXACT);

      // the chunk log: A wrote the first chunks, B (its activity's tag on every row) the rest
      const { rows } = await env.db.pool.query(
        'SELECT worker, count(*)::int AS chunks FROM backfill.chunks WHERE run_id = $1 GROUP BY worker ORDER BY worker',
        [run.runId],
      );
      const byA = rows.filter((r) => r.worker.startsWith('build-a-'));
      const byB = rows.filter((r) => r.worker.startsWith('build-b-'));
      expect(byA.reduce((n, r) => n + r.chunks, 0)).toBe(cut[0].chunks);
      expect(byA.every((r) => !r.worker.endsWith(BUILD_B_ACTIVITY_TAG))).toBe(true);
      expect(byB.length).toBeGreaterThan(0);
      expect(byB.every((r) => r.worker.endsWith(BUILD_B_ACTIVITY_TAG))).toBe(true);
      expect(byA.length + byB.length).toBe(rows.length);

      // Temporal's history: A's workflow tasks, then B's, B's patch marker, and the memo B's new code wrote
      const history = await run.handle.fetchHistory();
      const taskIdentities = (history.events ?? []).flatMap((e) =>
        e.workflowTaskCompletedEventAttributes ? [e.workflowTaskCompletedEventAttributes.identity ?? ''] : [],
      );
      const firstB = taskIdentities.findIndex((id) => id.startsWith('build-b-'));
      expect(firstB).toBeGreaterThan(0);
      expect(taskIdentities.slice(0, firstB).every((id) => id.startsWith('build-a-'))).toBe(true);
      expect(taskIdentities.slice(firstB).every((id) => id.startsWith('build-b-'))).toBe(true);
      const patches = (history.events ?? [])
        .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
        .flatMap((e) => Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((p) => p.payloads ?? []))
        .map((p) => Buffer.from(p.data ?? []).toString('utf8'));
      expect(patches.filter((p) => p.includes(BUILD_B_PATCH))).toHaveLength(1);
      expect((await run.handle.describe()).memo).toMatchObject({ lastLaunchBy: 'build-b' });
    } finally {
      await Promise.all(buildBWorkers.map(drain));
    }
  });

  test('Worker Versioning: a run pinned to build A finishes on A, through its continue-as-new generations, while the next run goes to B; Temporal, the chunk log, status and the Web UI say which build ran what', async () => {
    const queue = uniqueQueue('versioned');
    const deploymentName = uniqueName('bf-deploy', '-');
    const connection = { address: d.server.address, namespace: 'default' };
    const build = (buildId: string) => startTestWorker(queue, { temporal: connection, deployment: { name: deploymentName, buildId, behavior: 'PINNED' } });
    const workers = [await build('a')];
    try {
      await setCurrentVersion(d.server.address, deploymentName, 'a');
      await env.db.pool.query(
        'TRUNCATE app.orders_usd; DROP TABLE IF EXISTS app.orders_usd_b; CREATE TABLE app.orders_usd_b (LIKE app.orders_usd INCLUDING ALL)',
      );
      const slow = { partition: { by: 'range' as const, column: 'id', size: 4_000 }, limits: { chunkSize: 500, concurrency: 4, rowsPerSecond: 4_000 } };
      const first = await startRun(
        { client: d.client, taskQueue: queue },
        // a short history bound: the run continues as new several times while B is current
        { specFile: writeSpec(ordersSpec(env.db.envVar, { name: 'pinned-a', ...slow })), actor: 'test', maxHistoryEvents: 60 },
      );
      await untilRowsRead(env.db, first.runId, 4_000);
      // build B arrives and becomes current while the first run is mid-way
      workers.push(await build('b'));
      await setCurrentVersion(d.server.address, deploymentName, 'b');
      const second = await startRun(
        { client: d.client, taskQueue: queue },
        {
          specFile: writeSpec(ordersSpec(env.db.envVar, { name: 'pinned-b', ...slow, target: { table: 'app.orders_usd_b', key: ['id'], mode: 'upsert' } })),
          actor: 'test',
        },
      );
      expect(await finalStatus(env.db, first.runId)).toBe('succeeded');
      expect(await finalStatus(env.db, second.runId)).toBe('succeeded');

      const version = async (handle: typeof first.handle) => (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
      expect(await version(first.handle)).toMatchObject({ behavior: 1, deploymentVersion: { deploymentName, buildId: 'a' } }); // PINNED
      // visibility is written behind the history: ask until the generations show
      const generations = await pollUntil(
        async () => {
          const listed = await d.client.workflowService.listWorkflowExecutions({ namespace: 'default', query: `WorkflowId = '${first.workflowId}'` });
          return listed.executions.length > 1 ? listed.executions.length : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      expect(generations).toBeGreaterThan(1);
      expect(await version(second.handle)).toMatchObject({ behavior: 1, deploymentVersion: { deploymentName, buildId: 'b' } });
      const builds = async (runId: string) =>
        (await env.db.pool.query("SELECT DISTINCT split_part(worker, '#', 2) AS build FROM backfill.chunks WHERE run_id = $1 ORDER BY 1", [runId])).rows.map(
          (r) => r.build,
        );
      expect(await builds(first.runId)).toEqual(['a']);
      expect(await builds(second.runId)).toEqual(['b']);
      // `backfill status` lists the workers that wrote a run's chunks, each named with its build
      const writers = (await statusReport(env.db.pool, (await getRun(env.db.pool, first.runId))!)).workers;
      expect(writers.length).toBeGreaterThan(0);
      expect(writers.every((w) => w.worker.endsWith('#a'))).toBe(true);
      expect(await audit(env.db, first.runId)).toEqual(EXACT);
      // while build A's worker is up to answer the metadata query: the Web UI says the same
      await expectWebUiShowsPinnedRun({
        workflowId: first.workflowId,
        runId: first.runId,
        deploymentName,
        buildId: 'a',
        partitions: (await env.db.pool.query('SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1', [first.runId])).rows[0].n,
      });
      const { rows } = await env.db.pool.query(
        'SELECT (SELECT count(*) FROM (TABLE app.orders_usd EXCEPT ALL TABLE app.orders_usd_b) x)::int AS missing, (SELECT count(*) FROM (TABLE app.orders_usd_b EXCEPT ALL TABLE app.orders_usd) x)::int AS extra',
      );
      expect(rows[0]).toEqual({ missing: 0, extra: 0 });
    } finally {
      for (const w of workers) await w.stop();
    }
  });
});

const frameText = (frame: Frame) =>
  frame
    .locator('body')
    .innerText()
    .catch(() => '');

/**
 * The Web UI server compose deploys, run against this Temporal, shows the pinned run as an
 * operator finds it: its deployment, build and behaviour, and its progress in current details
 * (answered by a worker of its build).
 */
async function expectWebUiShowsPinnedRun(pinned: { workflowId: string; runId: string; deploymentName: string; buildId: string; partitions: number }) {
  if (!existsSync(CHROMIUM)) return void process.stderr.write(`Web UI check skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)\n`);
  const ui = await startTemporalUi(await ensureTemporalUi(), d.server.address, mkdtempSync(path.join(os.tmpdir(), 'backfill-ui-')));
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // the workflow id's page shows its latest generation, the one that finished the run
    await page.goto(`${ui.url}/namespaces/default/workflows/${encodeURIComponent(pinned.workflowId)}`);
    await page.getByText(pinned.deploymentName).first().waitFor({ timeout: 30_000 });
    const header = await page.locator('body').innerText();
    expect(header).toMatch(new RegExp(`Build ID\\s+${pinned.buildId}\\s`));
    expect(header).toMatch(/Versioning Behavior\s+Pinned/);
    await page.getByText('User Metadata', { exact: true }).first().click();
    const heading = `Backfill pinned-a / ${pinned.runId}: succeeded`;
    const details = await pollUntil(
      async () => {
        for (const frame of page.frames()) if ((await frameText(frame)).includes(heading)) return (await frameText(frame)).replace(/\s+/g, ' ');
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const n = pinned.partitions;
    expect(details).toContain(`partitions total pending running succeeded failed cancelled ${n} 0 0 ${n} 0 0`);
    await page.screenshot({ path: path.join(mkdtempSync(path.join(os.tmpdir(), 'backfill-test-screenshots-')), 'production-web-ui.png'), fullPage: true });
  } finally {
    await browser?.close();
    await ui.stop();
  }
}
