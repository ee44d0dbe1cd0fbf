/**
 * Fleet runs on three real PostgreSQL clusters, each its own process and port, each with a worker
 * process of its own that holds only its database's variable (docs/fleets.md): members start in
 * their waves as runs with a single database's guarantees, each exact in its own database; a
 * member no worker serves waits for one (said, never failed); a failure under onError: stop starts
 * no other member; a wave waits for a person where the spec asks, and a paused fleet pauses its
 * running members. Every fleet is kept in every member's ledger.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import type pg from 'pg';
import { BackfillClient } from '../src/api/backfill';
import type { StartedFleetInfo } from '../src/api/fleet-api';
import { createPool } from '../src/db/pool';
import { waitForFleet } from '../src/fleet/fleet-result';
import { databaseQueueOf } from './helpers/database-queue';
import { ensureDatabase } from '../src/dev/postgres';
import { databaseWorkers } from '../src/temporal/task-queue-pollers';
import { pollUntil } from '../src/util/poll-until';
import { connectClient } from '../src/temporal/connect';
import { ensureSearchAttributes } from '../src/temporal/search-attributes';
import { runCli } from './helpers/cli';
import { startClusters, type Clusters } from './helpers/clusters';
import { createOrders, diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { temporalAddress, testClient, uniqueQueue } from './helpers/temporal';
import { startsFirst } from './helpers/turns';
import { spawnDatabaseWorker } from './helpers/database-worker';
import { waitUntil } from './helpers/wait';
import { expectMemberExact } from './helpers/fleet-members';

startsFirst('three PostgreSQL clusters and a worker process for each');

const ROWS = 6_000;
const VARS = ['BF_FLEETRUN_A', 'BF_FLEETRUN_B', 'BF_FLEETRUN_C'] as const;
type Var = (typeof VARS)[number];
const [A, B, C] = VARS;
const baseQueue = uniqueQueue('fleet-run');
const cliEnv = { BACKFILL_TASK_QUEUE: baseQueue };

let clusters: Clusters;
let client: Client;
let closeClient: () => Promise<void>;
let backfill: BackfillClient;
const pools = new Map<Var, pg.Pool>();
const queues = new Map<Var, string>();
const workers = new Map<Var, ChildProcess>();

const alive = (child: ChildProcess | undefined) => child !== undefined && child.exitCode === null && child.signalCode === null;

async function killWorker(variable: Var): Promise<void> {
  const child = workers.get(variable)!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function startWorker(variable: Var): Promise<void> {
  if (alive(workers.get(variable))) return;
  const child = spawnDatabaseWorker(variable, baseQueue);
  workers.set(variable, child);
  await waitUntil(async () => (await databaseWorkers(client.workflow, queues.get(variable)!)).serving, `the worker of ${variable} to poll its queue`, 60_000);
}

beforeAll(async () => {
  clusters = await startClusters(VARS.length);
  ({ client, close: closeClient } = await testClient());
  for (const [i, variable] of VARS.entries()) {
    process.env[variable] = await ensureDatabase(clusters.urls[i], 'fleet_run');
    const pool = createPool(process.env[variable]!, { max: 3 });
    pools.set(variable, pool);
    await createOrders(pool, ROWS);
    queues.set(variable, await databaseQueueOf(baseQueue, variable, pool));
  }
  backfill = new BackfillClient('DATABASE_URL', { address: temporalAddress(), taskQueue: baseQueue });
  // C's worker starts later, in the first test: until then its member waits for one
  await Promise.all([startWorker(A), startWorker(B)]);
});

afterAll(async () => {
  for (const child of workers.values()) {
    if (!alive(child)) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await backfill?.close();
  for (const pool of pools.values()) await pool.end();
  await closeClient?.();
  await clusters?.stop();
  for (const variable of VARS) delete process.env[variable];
});

function fleetSpec(name: string, fleet: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const { database: _one, ...spec } = ordersSpec('unused', {
    name,
    partition: { by: 'range', column: 'id', size: 2_000 },
    limits: { chunkSize: 500, concurrency: 2 },
  });
  return writeSpec({ ...spec, databases: [...VARS], fleet, ...extra });
}

async function truncateTargets(): Promise<void> {
  for (const pool of pools.values()) await pool.query('TRUNCATE app.orders_usd');
}

const expectExact = (variable: Var, runId: string) => expectMemberExact(pools.get(variable)!, variable, runId);

/** A ledger query that reads nothing until the first run in that database has created the ledger. */
async function ledgerValue<T>(variable: Var, sql: string, params: unknown[], none: T): Promise<T> {
  const pool = pools.get(variable)!;
  if ((await pool.query("SELECT to_regclass('backfill.runs') IS NULL AS none")).rows[0].none) return none;
  return (await pool.query(sql, params)).rows[0]?.v ?? none;
}

const memberOf = (started: StartedFleetInfo, variable: Var) => started.members.find((m) => m.variable === variable)!;

test('a fleet in two waves: each member a run of its own, exact in its own database; a member no worker serves waits, said, and goes on once one does', async () => {
  // some 45 partitions of a chunk each: every member's run starts them in groups, on its own database's queue
  const small = { partition: { by: 'range', column: 'id', size: 400 }, limits: { chunkSize: 500, concurrency: 6 } };
  const started = await backfill.startFleet(fleetSpec('fleet-run-main', { waves: [1, '100%'], concurrency: 2 }, small), { actor: 'test' });
  expect(started.fleetId).toMatch(/^fleet-\d{8}-\d{4}-[0-9a-f]{16}$/);
  expect(started.members.map((m) => [m.variable, m.wave])).toEqual([
    [A, 1],
    [B, 2],
    [C, 2],
  ]);
  // the wave: B and C start only once A has succeeded
  const statusOf = async () => backfill.fleetStatus(started.fleetId);
  const waiting = await pollUntil(
    async () => {
      const s = await statusOf();
      return s.members.find((m) => m.variable === C)?.waitingForWorker ? s : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  expect(waiting!.members.find((m) => m.variable === A)).toMatchObject({ status: 'succeeded' });
  expect(waiting!.members.find((m) => m.variable === C)).toMatchObject({ status: 'running', waitingForWorker: { database: C, queue: queues.get(C) } });
  const text = await runCli(['status', started.fleetId], cliEnv);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(new RegExp(`Fleet fleet-run-main/${started.fleetId}: RUNNING — wave 2 of 2`));
  expect(text.stdout).toContain(`${C}: no worker serves ${C}`);
  // A's run registered before B's and C's started: the waves' order, from the ledgers
  const registeredAt = async (v: Var) =>
    (await pools.get(v)!.query<{ created_at: Date }>('SELECT created_at FROM backfill.runs WHERE run_id = $1', [memberOf(started, v).runId])).rows[0]
      ?.created_at;
  const finishedA = (await pools.get(A)!.query<{ finished_at: Date }>('SELECT finished_at FROM backfill.runs WHERE run_id = $1', [memberOf(started, A).runId]))
    .rows[0].finished_at;
  expect((await registeredAt(B))!.getTime()).toBeGreaterThan(finishedA.getTime());

  await startWorker(C);
  const result = await started.result();
  expect(result).toMatchObject({ status: 'succeeded' });
  expect(result.members.map((m) => m.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  for (const v of VARS) await expectExact(v, memberOf(started, v).runId);
  expect(result.rowsWritten).toBe(result.members.reduce((n, m) => n + m.result!.rowsWritten, 0));
  for (const v of VARS) {
    const { rows } = await pools
      .get(v)!
      .query<{ partitions: number; grouped: number }>(
        `SELECT count(*)::int AS partitions, count(*) FILTER (WHERE workflow_id LIKE '%/group/%')::int AS grouped FROM backfill.partitions WHERE run_id = $1`,
        [memberOf(started, v).runId],
      );
    expect({ v, grouped: rows[0].grouped > rows[0].partitions / 2, partitions: rows[0].partitions >= 40 }).toEqual({ v, grouped: true, partitions: true });
  }

  // every member's ledger keeps the fleet's record and its run's place in it
  for (const v of VARS) {
    const pool = pools.get(v)!;
    const fleet = (await pool.query('SELECT * FROM backfill.fleets WHERE fleet_id = $1', [started.fleetId])).rows[0];
    expect(fleet).toMatchObject({ name: 'fleet-run-main', started_by: 'test', waves: 2, concurrency: 2, on_error: 'stop', approve: false, excluded: [] });
    expect(fleet.members.map((m: { variable: string }) => m.variable)).toEqual([...VARS]);
    expect(JSON.stringify(fleet)).not.toContain('postgresql://');
    const run = (await pool.query('SELECT fleet_id, fleet_member, fleet_wave, database_var FROM backfill.runs WHERE run_id = $1', [memberOf(started, v).runId]))
      .rows[0];
    expect(run).toEqual({ fleet_id: started.fleetId, fleet_member: v, fleet_wave: v === A ? 1 : 2, database_var: v });
  }
  // in Temporal: the fleet's members are its children, on the common queue, their work on their databases' queues
  const child = await client.workflow.getHandle(memberOf(started, B).workflowId).describe();
  expect(child.raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(started.workflowId);
  expect(child.memo).toMatchObject({ database: B, databaseQueue: queues.get(B), fleetId: started.fleetId });
  const details = await client.workflow.getHandle(started.workflowId).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  expect(details.currentDetails).toContain(`**fleet fleet-run-main** \`${started.fleetId}\` — **succeeded**`);
  expect(details.currentDetails).toMatch(new RegExp(`\\| ${C} \\| 2 \\| succeeded \\| \\d+ \\|`));

  const done = await runCli(['status', started.fleetId, '-o', 'json'], cliEnv);
  const report = JSON.parse(done.stdout);
  expect(report).toMatchObject({ status: 'succeeded', totals: { members: 3, byStatus: { succeeded: 3 } } });
  expect(report.totals.rowsWritten).toBe(result.rowsWritten);

  // verified whole, each member from its own database
  const verified = await runCli(['verify', started.fleetId], cliEnv);
  expect(verified.stdout).toMatch(new RegExp(`^Verify fleet fleet-run-main/${started.fleetId}: CLEAN — 3 member\\(s\\) verified`));
  expect(verified.code).toBe(0);

  // a row changed since in one member: verify finds it there, by key; revert leaves it alone, that member's conflict, and undoes the rest
  const pc = pools.get(C)!;
  const touched = (await pc.query('UPDATE app.orders_usd SET amount_usd = 0 WHERE id = (SELECT min(id) FROM app.orders_usd) RETURNING id')).rows[0].id;
  const wrong = await runCli(['verify', started.fleetId, '--member', C], cliEnv);
  expect(wrong.code).toBe(1);
  expect(wrong.stdout).toMatch(/NOT CLEAN — 1 member\(s\) verified/);
  expect(wrong.stdout).toMatch(new RegExp(`${C}: Verify .* MISMATCHES[^]*1 differ, 0 absent, 0 not produced by the transform; keys: ${touched}\\b`));
  expect(wrong.stdout).not.toContain(`${A}:`);
  expect((await runCli(['verify', started.fleetId, '--member', 'NOT_A_MEMBER'], cliEnv)).stderr).toMatch(/--member NOT_A_MEMBER: not a member of fleet/);
  expect((await runCli(['revert', started.fleetId, '--reason', 'undo', '--dry-run'], cliEnv)).stderr).toMatch(
    /--dry-run, --partition and --run-id take one run/,
  );
  expect((await runCli(['revert', started.fleetId, '--reason', 'undo'], cliEnv)).stderr).toMatch(/standard input is not a terminal|--yes/);
  const reverted = await runCli(['revert', started.fleetId, '--reason', 'wrong rate table', '--yes', '--wait'], cliEnv);
  expect(reverted.stderr).toContain(`Reverting fleet ${started.fleetId}:`);
  expect(reverted.stdout).toMatch(new RegExp(`${A}: revert \\S+ succeeded, \\d+ rows put back\\n`));
  expect(reverted.stdout).toMatch(new RegExp(`${C}: revert \\S+ succeeded, \\d+ rows put back, 1 conflict\\(s\\) left alone`));
  expect(reverted.code).toBe(1);
  for (const v of [A, B]) expect((await pools.get(v)!.query('SELECT count(*)::int AS n FROM app.orders_usd')).rows[0].n).toBe(0);
  expect((await pc.query('SELECT id FROM app.orders_usd')).rows.map((r) => r.id)).toEqual([touched]);
  await truncateTargets();
});

test('onError stop: a member that fails starts no other; the fleet ends failed, naming it; retry-failed, once fixed, retries its failed partitions alone and starts the rest', async () => {
  await truncateTargets();
  await startWorker(C);
  const pa = pools.get(A)!;
  // a value A's target refuses when it is written (a plan, which writes nothing, cannot see it): a data error in A's run
  const bad = (await pa.query("SELECT id FROM app.orders WHERE status <> 'void' AND currency = 'USD' ORDER BY id OFFSET 100 LIMIT 1")).rows[0].id;
  await pa.query('ALTER TABLE app.orders_usd ADD CONSTRAINT orders_usd_sane CHECK (amount_usd < 1e9)');
  await pa.query('UPDATE app.orders SET amount_cents = 1e12 WHERE id = $1', [bad]);
  let started: StartedFleetInfo;
  try {
    started = await backfill.startFleet(fleetSpec('fleet-run-stop', { waves: [1, '100%'], concurrency: 3 }), { actor: 'test' });
    const result = await started.result();
    expect(result.status).toBe('failed');
    expect(result.members.map((m) => [m.variable, m.status])).toEqual([
      [A, 'failed'],
      [B, 'not-started'],
      [C, 'not-started'],
    ]);
    for (const v of [B, C]) {
      expect(await ledgerValue(v, 'SELECT count(*)::int AS v FROM backfill.runs WHERE fleet_id = $1', [started.fleetId], 0)).toBe(0);
      expect((await pools.get(v)!.query('SELECT count(*)::int AS n FROM app.orders_usd')).rows[0].n).toBe(0);
    }
    const described = await client.workflow.getHandle(started.workflowId).describe();
    expect(described.status.name).toBe('FAILED');
    const status = await runCli(['status', started.fleetId], cliEnv);
    expect(status.stdout).toMatch(/FAILED/);
    expect(status.stdout).toContain(`Stopping: ${A} failed; onError: stop starts no other member`);
    expect(status.stdout).toMatch(new RegExp(`${A}: id:\\S+ failed \\(id in .*\\): .*violates check constraint "orders_usd_sane"`));
  } finally {
    await pa.query('UPDATE app.orders SET amount_cents = 100 WHERE id = $1', [bad]);
    await pa.query('ALTER TABLE app.orders_usd DROP CONSTRAINT orders_usd_sane');
  }
  // fixed: the next attempt of the fleet, under its workflow id
  const runA = memberOf(started, A).runId;
  const xminsBefore = await pa.query<{ id: string; xmin: string }>('SELECT id, xmin::text FROM app.orders_usd ORDER BY id');
  const retry = await runCli(['retry-failed', started.fleetId, '--reason', 'bad amount fixed', '--wait'], cliEnv);
  expect(retry.stderr).toMatch(new RegExp(`Fleet ${started.fleetId}: attempt 2`));
  expect(retry.stderr).toMatch(new RegExp(`${A}: retrying 1 failed or cancelled partition\\(s\\) from their checkpoints`));
  expect(retry.stderr).toContain(`${B}: starting its run`);
  expect(retry.code).toBe(0);
  expect(retry.stdout).toMatch(/SUCCEEDED/);
  for (const v of VARS) await expectExact(v, memberOf(started, v).runId);
  // A's run is attempt 2 of the same run; the rows its first attempt wrote were not written again
  expect((await pa.query('SELECT attempt FROM backfill.runs WHERE run_id = $1', [runA])).rows[0].attempt).toBe(2);
  const kept = new Map(xminsBefore.rows.map((r) => [r.id, r.xmin]));
  const after = await pa.query<{ id: string; xmin: string }>('SELECT id, xmin::text FROM app.orders_usd ORDER BY id');
  const rewritten = after.rows.filter((r) => kept.has(r.id) && kept.get(r.id) !== r.xmin);
  expect(rewritten).toEqual([]);
  expect((await runCli(['retry-failed', started.fleetId], cliEnv)).stderr).toMatch(/succeeded; there is nothing to retry/);
});

test("a member failing its gate under onError stop: its wave's other member finishes, the next wave never starts; the fleet fails, naming the gate", async () => {
  await truncateTargets();
  await startWorker(C);
  const pb = pools.get(B)!;
  // a value B's target takes (no constraint says no): only the spec's invariant, checked as B's run ends, does
  const bad = (await pb.query("SELECT id FROM app.orders WHERE status <> 'void' AND currency = 'USD' ORDER BY id OFFSET 10 LIMIT 1")).rows[0].id;
  await pb.query('UPDATE app.orders SET amount_cents = 999999999 WHERE id = $1', [bad]);
  try {
    const spec = fleetSpec(
      'fleet-run-gate',
      { waves: [2, '100%'], concurrency: 2 },
      {
        validate: {
          invariants: [{ name: 'amount-sane', sql: 'SELECT t.id FROM app.orders_usd t JOIN source_rows s USING (id) WHERE t.amount_usd > 1000000' }],
        },
      },
    );
    const started = await backfill.startFleet(spec, { actor: 'test' });
    expect(started.members.map((m) => [m.variable, m.wave])).toEqual([
      [A, 1],
      [B, 1],
      [C, 2],
    ]);
    const result = await started.result();
    expect(result.status).toBe('failed');
    expect(result.members.map((m) => [m.variable, m.status])).toEqual([
      [A, 'succeeded'],
      [B, 'failed'],
      [C, 'not-started'],
    ]);
    // every partition of B's was written; its gate failed the run
    const runB = (await pb.query('SELECT status, partitions_total, last_error FROM backfill.runs WHERE run_id = $1', [memberOf(started, B).runId])).rows[0];
    expect(runB.status).toBe('failed');
    expect(runB.last_error).toMatch(/the final check failed: invariant:amount-sane \(1 row\(s\)\)/);
    await expectExact(A, memberOf(started, A).runId);
    expect(await ledgerValue(C, 'SELECT count(*)::int AS v FROM backfill.runs WHERE fleet_id = $1', [started.fleetId], 0)).toBe(0);
    expect((await pools.get(C)!.query('SELECT count(*)::int AS n FROM app.orders_usd')).rows[0].n).toBe(0);
    const status = await runCli(['status', started.fleetId], cliEnv);
    expect(status.stdout).toMatch(new RegExp(`Fleet fleet-run-gate/${started.fleetId}: FAILED — wave 1 of 2, 1 of 3 member\\(s\\) succeeded`));
    expect(status.stdout).toContain(`Stopping: ${B} failed; onError: stop starts no other member`);
    expect(status.stdout).toMatch(new RegExp(`${B}: the final check failed: invariant:amount-sane`));
  } finally {
    await pb.query('UPDATE app.orders SET amount_cents = 100 WHERE id = $1', [bad]);
  }
});

test('a wave waits for a person (approve), refused when nothing waits; a paused fleet pauses its running members and starts none; per-member limits apply', async () => {
  await truncateTargets();
  await startWorker(C);
  // A paced so that wave 1 is still running when the first approve comes (unpaced, under load, it could already wait)
  const spec = fleetSpec('fleet-run-approve', {
    waves: [1, '100%'],
    concurrency: 2,
    approve: true,
    members: { [A]: { limits: { rowsPerSecond: 1_000 } }, [B]: { limits: { rowsPerSecond: 600 } } },
  });
  // started from its approved plan, by the CLI: who approved it is kept with every member's run
  const planFile = path.join(path.dirname(spec), 'fleet-plan.json');
  expect((await runCli(['plan', spec, '--save', planFile], cliEnv)).code).toBe(0);
  const startedCli = await runCli(['start', spec, '--plan', planFile, '--approved-by', 'carol', '--actor', 'test', '-o', 'json'], cliEnv);
  expect(startedCli.code).toBe(0);
  const started = JSON.parse(startedCli.stdout) as StartedFleetInfo;
  expect(started.members.map((m) => m.variable)).toEqual([...VARS]);
  const early = await runCli(['approve', started.fleetId, '--reason', 'too soon'], cliEnv);
  // wave 1 runs: there is nothing to approve yet
  expect(early.stderr).toMatch(/is not waiting for an approval \(wave 1 of 2\)/);
  expect(early.code).toBe(2);
  await pollUntil(async () => ((await backfill.fleetStatus(started.fleetId)).status === 'awaiting-approval' ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  const held = await backfill.fleetStatus(started.fleetId);
  expect(held.members.map((m) => m.status)).toEqual(['succeeded', 'waiting', 'waiting']);
  expect((await runCli(['status', started.fleetId], cliEnv)).stdout).toContain(`Wave 2 waits for a person: backfill approve ${started.fleetId}`);

  const approved = await runCli(['approve', started.fleetId, '--reason', 'A checked by hand', '--actor', 'alice'], cliEnv);
  expect(approved.code).toBe(0);
  expect(approved.stdout).toContain(`Fleet ${started.fleetId}: its next wave may start`);
  // B is paced; once it writes, the fleet is paused: B's run pauses, as does C's if it runs
  const pb = pools.get(B)!;
  await waitUntil(
    async () =>
      Number(await ledgerValue(B, 'SELECT coalesce(sum(rows_read), 0) AS v FROM backfill.partitions WHERE run_id = $1', [memberOf(started, B).runId], 0)) > 0,
    'B to be under way',
    60_000,
  );
  const paused = await runCli(['pause', started.fleetId, '--reason', 'peak hour', '--actor', 'bob'], cliEnv);
  expect(paused.code).toBe(0);
  expect(paused.stdout).toMatch(new RegExp(`Fleet ${started.fleetId} paused; told its running member\\(s\\): .*${B}`));
  await waitUntil(
    async () => (await pb.query('SELECT paused FROM backfill.runs WHERE run_id = $1', [memberOf(started, B).runId])).rows[0].paused === true,
    "B's run to be paused",
    30_000,
  );
  const event = (await pb.query("SELECT actor, reason FROM backfill.run_events WHERE run_id = $1 AND kind = 'paused'", [memberOf(started, B).runId])).rows[0];
  expect(event).toEqual({ actor: 'bob', reason: `fleet ${started.fleetId}: peak hour` });
  expect((await runCli(['pause', started.fleetId, '--reason', 'again'], cliEnv)).stderr).toMatch(/is already paused by bob/);
  // one member's limits, through its own run: B's pace lifted while it is paused, so that it
  // cannot have finished its rows (at 600 rows/s, a few seconds of CLI calls under load) first
  const lifted = await runCli(['set-limits', started.fleetId, '--member', B, '--rows-per-second', 'off', '--reason', 'quiet now'], cliEnv);
  expect({ code: lifted.code, stderr: lifted.stderr }).toEqual({ code: 0, stderr: '' });
  expect(lifted.stdout).toMatch(new RegExp(`^${B} \\(run ${memberOf(started, B).runId}\\): .*`));
  expect(lifted.stdout).not.toContain('600 rows/s');
  expect((await runCli(['set-limits', started.fleetId, '--member', 'NOPE', '--chunk-size', '100'], cliEnv)).stderr).toMatch(
    new RegExp(`--member NOPE: not a member of fleet ${started.fleetId} \\(members: ${A}, ${B}, ${C}\\)`),
  );

  expect((await runCli(['resume', started.fleetId, '--reason', 'peak over'], cliEnv)).code).toBe(0);

  const result = await waitForFleet(client.workflow.getHandle(started.workflowId));
  // when it did not succeed, what status says of it is the message
  const said = result.status === 'succeeded' ? '' : (await runCli(['status', started.fleetId], cliEnv)).stdout;
  expect({ status: result.status, said }).toEqual({ status: 'succeeded', said: '' });
  for (const v of VARS) await expectExact(v, memberOf(started, v).runId);
  for (const v of VARS) {
    const run = (await pools.get(v)!.query('SELECT approved_by FROM backfill.runs WHERE run_id = $1', [memberOf(started, v).runId])).rows[0];
    expect(run.approved_by).toBe('carol');
  }
  expect((await pb.query('SELECT approved_by FROM backfill.fleets WHERE fleet_id = $1', [started.fleetId])).rows[0].approved_by).toBe('carol');
  const runB = (await pb.query('SELECT wave_approved_by, spec, limits FROM backfill.runs WHERE run_id = $1', [memberOf(started, B).runId])).rows[0];
  expect(runB.wave_approved_by).toBe('alice');
  // B ran with its override (the spec it registered), until an operator lifted it
  expect(runB.spec.limits.rowsPerSecond).toBe(600);
  expect(runB.limits.rowsPerSecond ?? null).toBeNull();
  const runC = (await pools.get(C)!.query('SELECT spec FROM backfill.runs WHERE run_id = $1', [memberOf(started, C).runId])).rows[0];
  expect(runC.spec.limits.rowsPerSecond).toBeUndefined();
  const report = await backfill.fleetStatus(started.fleetId);
  expect(report.approvals).toEqual([{ wave: 2, actor: 'alice', reason: 'A checked by hand' }]);
  // for reviewers: the fleet, then each member's own report, its headings one level down
  const md = await runCli(['report', started.fleetId], cliEnv);
  expect(md.stdout).toMatch(new RegExp(`^# Fleet fleet-run-approve \`${started.fleetId}\`: succeeded`));
  expect(md.stdout).toContain('- wave 2 approved by alice: A checked by hand');
  expect(md.stdout).toMatch(/- \S+ paused by bob: peak hour/);
  for (const v of VARS) expect(md.stdout).toContain(`## Member ${v}\n\n## `);
  expect((await runCli(['report', started.fleetId, '-o', 'html'], cliEnv)).stderr).toMatch(/-o html renders one run's page/);
  expect((await runCli(['resume', started.fleetId], cliEnv)).stderr).toMatch(/already finished \(succeeded\); there is nothing to resume/);
});

test("faults: a member's database stops mid-run — it holds, said, the others finish; back, it resumes from its checkpoints; its worker SIGKILLed, another takes over; every member exact", async () => {
  await truncateTargets();
  await startWorker(C);
  const spec = fleetSpec('fleet-run-faults', { concurrency: 3, members: { [B]: { limits: { rowsPerSecond: 800 } } } });
  const started = await backfill.startFleet(spec, { actor: 'test' });
  const runB = memberOf(started, B).runId;
  const readB = () => ledgerValue(B, 'SELECT coalesce(sum(rows_read), 0)::int AS v FROM backfill.partitions WHERE run_id = $1', [runB], 0);
  await waitUntil(async () => (await readB()) > 800, 'B to be under way', 60_000);
  await clusters.stopCluster(1);
  try {
    // the others go on to the end while B's database is away
    await pollUntil(
      async () => {
        const s = await backfill.fleetStatus(started.fleetId);
        return s.members.filter((m) => m.status === 'succeeded').length === 2 ? s : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const away = await backfill.fleetStatus(started.fleetId);
    expect(away.status).toBe('running');
    expect(away.members.find((m) => m.variable === B)).toMatchObject({
      status: 'running',
      unread: expect.stringMatching(/database cannot be reached from here/),
    });
    const text = await runCli(['status', started.fleetId], cliEnv);
    expect(text.stdout).toMatch(new RegExp(`${B}: ${B}'s database cannot be reached from here \\(.*\\); its run holds until it answers`));
    expect(text.stdout).toMatch(new RegExp(`│ ${B} +│ 1 +│ running .*│ database unreachable: holds`));
  } finally {
    await clusters.startCluster(1);
  }
  const readBack = await readB();
  await waitUntil(async () => (await readB()) > readBack + 500, 'B to write again from its checkpoints', 120_000);
  // the worker next to B dies mid-partition; a new one takes its work over
  await killWorker(B);
  await startWorker(B);
  const result = await started.result();
  expect(result).toMatchObject({ status: 'succeeded' });
  // resumed from checkpoints, never from scratch: no key range of B was committed twice, and the chunks cover every row read
  for (const v of VARS) await expectExact(v, memberOf(started, v).runId);
});

test('cancel of a fleet: asked on no terminal without --yes is refused; then the running member stops at a chunk boundary, no other starts, the fleet ends cancelled', async () => {
  await truncateTargets();
  await startWorker(C);
  const spec = fleetSpec('fleet-run-cancel', { concurrency: 1, members: { [A]: { limits: { rowsPerSecond: 500 } } } });
  const started = await backfill.startFleet(spec, { actor: 'test' });
  const runA = memberOf(started, A).runId;
  await waitUntil(
    async () => Number(await ledgerValue(A, 'SELECT coalesce(sum(rows_read), 0) AS v FROM backfill.partitions WHERE run_id = $1', [runA], 0)) > 0,
    'A to be under way',
    60_000,
  );
  expect((await runCli(['cancel', started.fleetId, '--reason', 'wrong day'], cliEnv)).code).toBe(2);
  const cancelled = await runCli(['cancel', started.fleetId, '--reason', 'wrong day', '--yes', '--actor', 'dave'], cliEnv);
  expect(cancelled.code).toBe(0);
  expect(cancelled.stdout).toContain(`Fleet ${started.fleetId} cancelling; told its running member(s): ${A}.`);
  const result = await waitForFleet(client.workflow.getHandle(started.workflowId));
  expect(result.status).toBe('cancelled');
  expect(result.members.map((m) => [m.variable, m.status])).toEqual([
    [A, 'cancelled'],
    [B, 'not-started'],
    [C, 'not-started'],
  ]);
  const pa = pools.get(A)!;
  expect((await pa.query('SELECT status FROM backfill.runs WHERE run_id = $1', [runA])).rows[0].status).toBe('cancelled');
  const event = (await pa.query("SELECT actor, reason FROM backfill.run_events WHERE run_id = $1 AND kind = 'cancel-requested'", [runA])).rows[0];
  expect(event).toEqual({ actor: 'dave', reason: `fleet ${started.fleetId}: wrong day` });
  // what A committed stays, and is right
  expect(await diffAgainstExpected(pa, `id IN (SELECT id FROM app.orders_usd)`)).toMatchObject({ missing: 0, extra: 0 });
  for (const v of [B, C]) expect((await pools.get(v)!.query('SELECT count(*)::int AS n FROM app.orders_usd')).rows[0].n).toBe(0);
  expect((await runCli(['cancel', started.fleetId, '--yes', '--reason', 'again'], cliEnv)).stderr).toMatch(
    /already finished \(cancelled\); there is nothing to cancel/,
  );
  // fleets span ledgers: Temporal lists them
  const listed = await pollUntil(
    async () => {
      const fleets = JSON.parse((await runCli(['list', '--fleets', '--name', 'fleet-run-cancel', '-o', 'json'], cliEnv)).stdout) as {
        fleetId: string;
        status: string;
      }[];
      return fleets.find((f) => f.fleetId === started.fleetId && f.status === 'cancelled');
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  expect(listed).toMatchObject({ name: 'fleet-run-cancel', workflowId: started.workflowId });

  // where Temporal does not know the fleet (a namespace it never ran in, as after its retention): it is read back from its members' ledgers
  const elsewhere = `fleet-run-elsewhere-${Date.now()}`;
  await client.workflowService.registerNamespace({ namespace: elsewhere, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const there = await connectClient({ address: temporalAddress(), namespace: elsewhere });
  try {
    // a namespace is served some seconds after it is registered; then it takes Backfill's search attributes, as any namespace runs use
    await pollUntil(
      () =>
        ensureSearchAttributes(there.client).then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
  } finally {
    await there.close();
  }
  const forgottenArgs = ['--namespace', elsewhere];
  const forgotten = await pollUntil(
    async () => {
      const r = await runCli(['status', started.fleetId, '--database', A, ...forgottenArgs], cliEnv);
      return r.stdout.includes("read from its members' ledgers") ? r : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  expect(forgotten!.stdout).toMatch(new RegExp(`Fleet fleet-run-cancel/${started.fleetId}: CANCELLED — wave 1 of 1, 0 of 3 member\\(s\\) succeeded`));
  expect(forgotten!.stdout).toContain("read from its members' ledgers: Temporal no longer knows this fleet");
  expect(forgotten!.stdout).toMatch(new RegExp(`│ ${A} +│ 1 +│ cancelled`));
  const fromLedgers = JSON.parse((await runCli(['status', started.fleetId, '--database', A, '-o', 'json', ...forgottenArgs], cliEnv)).stdout);
  expect(fromLedgers).toMatchObject({ readFrom: 'ledgers', status: 'cancelled', startedBy: 'test', totals: { byStatus: { cancelled: 1, 'not-started': 2 } } });
  expect(fromLedgers.members.map((m: { variable: string; status: string }) => [m.variable, m.status])).toEqual([
    [A, 'cancelled'],
    [B, 'not-started'],
    [C, 'not-started'],
  ]);
  const report = await runCli(['report', started.fleetId, '--database', A, ...forgottenArgs], cliEnv);
  expect(report.code).toBe(0);
  expect(report.stdout).toMatch(new RegExp(`^# Fleet fleet-run-cancel \`${started.fleetId}\`: cancelled`));
  expect(report.stdout).toContain(`## Member ${A}`);
  expect(report.stdout).toContain('wrong day');
  const verified = await runCli(['verify', started.fleetId, '--database', A, ...forgottenArgs], cliEnv);
  expect(verified.stdout).toMatch(/CLEAN — 1 member\(s\) verified/);
  expect(verified.stdout).toContain(`${B}: not verified: its run never started`);
  expect(verified.code).toBe(0);
  // a member that never started keeps no record of it (nothing ran there): the refusal says where to look
  const nowhere = await runCli(['status', started.fleetId, '--database', C, ...forgottenArgs], cliEnv);
  expect(nowhere.code).toBe(2);
  expect(nowhere.stderr).toMatch(
    new RegExp(`Temporal knows no fleet .* the ledger in ${C} holds no record of it: .* name a member's variable with --database VAR`),
  );
  // a member's variable unset here: the fleet's end is not claimed
  const partial = JSON.parse((await runCli(['status', started.fleetId, '--database', A, '-o', 'json', ...forgottenArgs], { ...cliEnv, [B]: '' })).stdout);
  expect(partial.status).toBe('unknown');
});
