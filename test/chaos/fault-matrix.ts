/**
 * The fault matrix: one real backfill per fault, each hit mid-run, each ending with the target
 * compared row for row with a one-statement reference and the ledger checked for consistency
 * (every partition succeeded exactly once, each partition's chunk log contiguous from its first
 * key to its last, chunk counts adding up to the partition's and the partitions' to the run's).
 *
 * Everything runs here and is torn down after: an embedded PostgreSQL (restartable in
 * immediate mode), a Temporal dev server on a SQLite file (restartable on it), three worker
 * processes (`dist/worker.js`, as deployed) reaching both through TCP proxies this script can
 * cut, and this process as operator and follower.
 *
 * The long run is its own shape: 1,000 small partitions at a low rows/s cap inside allowed
 * hours that close mid-run, continuing as new every ~100 partitions, a worker killed every 6 s.
 *
 * Run: npm run chaos   (CHAOS_LONG_KILL_SECONDS, default 6; CHAOS_LONG_PARTITIONS, default 1000; CHAOS_ROWS, default 200000; CHAOS_RUN_SECONDS, a run's length without
 * faults, default 20; CHAOS_CASES, comma-separated, default all; CHAOS_OUTPUT=json)
 * Prints a Markdown table (test/chaos/README.md keeps it); exit 1 if any case ends wrong.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type pg from 'pg';
import { stringify } from 'yaml';
import { CONNECT_TIMEOUT_MS, createPool } from '../../src/db/pool';
import { embeddedPostgresHome, packageDirOf } from '../../src/dev/embedded-postgres-home';
import { untilDatabaseServed } from '../helpers/database-queue';
import { ensureDatabase, startEmbeddedPostgres, type LocalPostgres } from '../../src/dev/postgres';
import { ensureTemporalCli } from '../../src/dev/temporal-cli';
import { freePort, startDevServer, type DevServer } from '../../src/dev/temporal-server';
import { getRun } from '../../src/ledger/runs';
import { runImages } from '../../src/undo/run-images';
import { controlRun, followRun, setRunLimits, startRun } from '../../src/operations';
import { connectClient } from '../../src/temporal/connect';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { stuckRunReport } from './stuck-run';

export const CASES = [
  'kill-workers',
  'temporal-restart',
  'postgres-restart',
  'terminate-backends',
  'db-network',
  'db-partition',
  'temporal-network',
  'temporal-partition',
  'lock-contention',
  'statement-timeout',
  'deadlock',
  'disk-full',
  'long-run',
] as const;
export type ChaosCase = (typeof CASES)[number];

export interface CaseResult {
  fault: ChaosCase;
  /** What was done, in words. */
  injected: string;
  /** Seconds the run took, start to end. */
  seconds: number;
  /** From the end of the fault to the next committed chunk (ms); null when nothing was left to write. */
  recoveryMs: number | null;
  /** From the end of the fault to the next partition started (ms): Temporal's side back at work; null when none was left. */
  nextPartitionMs: number | null;
  rows: number;
  /** Row-for-row difference from the one-statement reference, both ways. */
  missing: number;
  extra: number;
  /** What the ledger check found wrong; empty when consistent. */
  ledgerProblems: string[];
  status: string;
  notes: string[];
  /** Worker processes that exited on their own during the case. */
  workerCrashes: number;
  /** The longest time without a committed chunk, in seconds (long-run: the closed hours and every recovery in it). */
  longestStallSeconds?: number;
}

/**
 * long-run fails past this: its closed hours (under a minute) and its recoveries (a partition's
 * heartbeat, 15 s; a ledger step's, 30 s) add up to well under it, and a run that waited out a
 * ten-minute bound once ended succeeded with nothing to show for it.
 */
export const LONG_RUN_STALL_LIMIT_SECONDS = 240;

export interface ChaosOptions {
  rows?: number;
  cases?: readonly ChaosCase[];
  say?: (line: string) => void;
  /** Seconds a run should last without faults (sets the rows/s cap). */
  runSeconds?: number;
}

const WORKERS = 3;
/** How often the long run loses a worker (CHAOS_LONG_KILL_SECONDS, default 6). */
const LONG_RUN_KILL_MS = Number(process.env.CHAOS_LONG_KILL_SECONDS || 6) * 1000;
/** How many partitions the long run has (CHAOS_LONG_PARTITIONS, default 1,000): several continue-as-new generations at ~100 each. */
const LONG_RUN_PARTITIONS = Number(process.env.CHAOS_LONG_PARTITIONS || 1000);
const OUTAGE_NOTE = 'the follower rode out a database outage';
const TASK_QUEUE = 'chaos';
const DB_VAR = 'CHAOS_DATABASE_URL';

const REFERENCE = `SELECT c.id, c.tenant, c.created_at, round(c.amount_cents * f.usd_rate / 100.0, 2)::numeric(14,2) AS amount_usd
  FROM chaos.orders c LEFT JOIN chaos.fx f USING (currency) WHERE c.status <> 'void'`;

export async function runChaos(options: ChaosOptions = {}): Promise<CaseResult[]> {
  const t0 = Date.now();
  const say = options.say ?? ((line: string) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`));
  const rows = options.rows ?? 200_000;
  const env = await startChaosEnvironment(say);
  const results: CaseResult[] = [];
  try {
    await createDataset(env.pool, rows);
    for (const fault of options.cases ?? CASES) {
      say(`chaos: ${fault}…`);
      const result = await runCase(env, fault, rows, options.runSeconds ?? 20, say);
      say(
        `chaos: ${fault}: ${result.status} in ${result.seconds.toFixed(1)} s, next chunk ${result.recoveryMs ?? '—'} ms, next partition ${result.nextPartitionMs ?? '—'} ms, missing ${result.missing}, extra ${result.extra}, ledger ${result.ledgerProblems.length === 0 ? 'consistent' : result.ledgerProblems.join('; ')}`,
      );
      results.push(result);
    }
  } finally {
    await env.stop();
  }
  return results;
}

interface ChaosEnvironment {
  pool: pg.Pool;
  client: Client;
  url: string;
  workers: WorkerSet;
  dbProxy: TcpProxy;
  temporalProxy: TcpProxy;
  restartTemporal(downMs: number): Promise<void>;
  restartPostgres(): Promise<void>;
  stop(): Promise<void>;
}

async function startChaosEnvironment(say: (line: string) => void): Promise<ChaosEnvironment> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-chaos-'));
  // restartable PostgreSQL: always an embedded one of our own, whatever DATABASE_URL says
  const home = embeddedPostgresHome(packageDirOf(require.resolve('embedded-postgres')), path.join(tmp, 'pg'));
  let postgres: LocalPostgres = await startEmbeddedPostgres({ ...home, port: 'any', say });
  // a restart comes back on the same port, behind the same proxy
  const pgPort = postgres.port;
  const url = await ensureDatabase(postgres.url, 'chaos');
  const pool = createPool(url, { max: 6, applicationName: 'backfill-chaos' });
  pool.on('error', () => undefined); // a restart drops idle connections; the next query reconnects

  const cliPath = await ensureTemporalCli(say);
  const temporalPort = await freePort();
  const dbFile = path.join(tmp, 'temporal.db');
  const startServer = () => startDevServer({ cliPath, port: temporalPort, uiPort: null, dbFile, say });
  let server: DevServer = await startServer();
  const { client, close } = await connectClient({ address: server.address, namespace: 'default' });

  const dbProxy = await startTcpProxy('127.0.0.1', pgPort);
  const temporalProxy = await startTcpProxy('127.0.0.1', temporalPort);
  const workerUrl = new URL(url);
  workerUrl.port = String(dbProxy.port);
  const workers = new WorkerSet({
    ...process.env,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalProxy.port}`,
    BACKFILL_TASK_QUEUE: TASK_QUEUE,
    [DB_VAR]: workerUrl.toString(),
    BACKFILL_DATABASES: DB_VAR,
    BACKFILL_MAX_ACTIVITIES: '4',
    LOG_LEVEL: process.env.CHAOS_WORKER_LOG ? (process.env.LOG_LEVEL ?? 'info') : 'fatal',
  });
  for (let i = 0; i < WORKERS; i++) workers.add();
  process.env[DB_VAR] = url;

  return {
    pool,
    client,
    url,
    workers,
    dbProxy,
    temporalProxy,
    async restartTemporal(downMs) {
      // SIGKILL: no orderly shutdown, as when its host dies; it comes back on its file
      server.process.kill('SIGKILL');
      await new Promise((resolve) => server.process.once('exit', resolve));
      await sleep(downMs);
      server = await startServer();
    },
    async restartPostgres() {
      // immediate mode (pg_ctl stop -m immediate sends SIGQUIT): no checkpoint, crash recovery on start
      const pid = Number(readFileSync(path.join(home.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGQUIT');
      while (existsSync(path.join(home.dataDir, 'postmaster.pid'))) await sleep(50);
      postgres = await startEmbeddedPostgres({ ...home, port: pgPort });
    },
    async stop() {
      await workers.stop();
      await close();
      await pool.end().catch(() => undefined);
      await dbProxy.close();
      await temporalProxy.close();
      await server.stop();
      await postgres.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Worker processes as deployed; killed and replaced at will. */
class WorkerSet {
  private readonly children = new Set<ChildProcess>();
  private readonly killed = new Set<ChildProcess>();
  /** Workers that exited without being told to: each one is a defect. */
  crashes = 0;
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  add(): ChildProcess {
    // CHAOS_WORKER_LOG=file keeps the workers' logs (LOG_LEVEL as set) for a look afterwards
    const log = process.env.CHAOS_WORKER_LOG ? openSync(process.env.CHAOS_WORKER_LOG, 'a') : 'ignore';
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'worker.js')], { env: this.env, stdio: ['ignore', log, log] });
    this.children.add(child);
    child.once('exit', () => {
      this.children.delete(child);
      if (!this.killed.has(child)) {
        this.crashes++;
        this.add(); // the matrix goes on; the crash is reported
      }
    });
    return child;
  }

  /** SIGKILLs one worker at random and starts its replacement. */
  killOne(): void {
    const all = [...this.children];
    if (all.length === 0) return;
    const victim = all[Math.floor(Math.random() * all.length)];
    this.killed.add(victim);
    victim.kill('SIGKILL');
    this.add();
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.children].map(
        (c) =>
          new Promise<void>((resolve) => {
            this.killed.add(c);
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
  }
}

async function createDataset(pool: pg.Pool, rows: number): Promise<void> {
  await pool.query(`
    DROP SCHEMA IF EXISTS chaos CASCADE;
    CREATE SCHEMA chaos;
    CREATE TABLE chaos.fx (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
    INSERT INTO chaos.fx VALUES ('USD', 1), ('EUR', 1.0832), ('GBP', 1.265), ('JPY', 0.006712);
    CREATE TABLE chaos.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, tenant integer NOT NULL, currency text, amount_cents bigint, status text NOT NULL);
    INSERT INTO chaos.orders
    SELECT n, timestamptz '2024-03-01' + n * interval '1 minute', 1 + (n * 7) % 12,
           CASE WHEN n % 97 = 0 THEN NULL ELSE (ARRAY['USD','EUR','GBP','JPY','CHF'])[1 + n % 5] END,
           CASE WHEN n % 41 = 0 THEN NULL ELSE 100 + (n * 48271) % 900000 END,
           CASE WHEN n % 29 = 0 THEN 'void' ELSE 'paid' END
      FROM generate_series(1::bigint, ${rows}) AS n;
    CREATE TABLE chaos.orders_usd (id bigint PRIMARY KEY, tenant integer, created_at timestamptz, amount_usd numeric(14,2));
    ANALYZE chaos.orders;`);
}

async function runCase(env: ChaosEnvironment, fault: ChaosCase, rows: number, runSeconds: number, say: (line: string) => void): Promise<CaseResult> {
  await env.pool.query('TRUNCATE chaos.orders_usd');
  const name = `chaos-${fault}`;
  const specFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'backfill-chaos-spec-')), `${name}.yaml`);
  const chunkSize = Math.max(200, Math.ceil(rows / 400));
  const longRun = fault === 'long-run';
  const limits = longRun
    ? // 1,000 partitions of a few chunks each at a low rows/s cap, inside allowed hours (open now)
      {
        chunkSize: Math.max(10, Math.ceil(rows / 2000)),
        concurrency: 6,
        rowsPerSecond: Math.ceil(rows / 60),
        window: { start: hhmm(Date.now() - 3600_000), end: hhmm(Date.now() + 6 * 3600_000), timeZone: 'UTC' },
      }
    : { chunkSize, concurrency: 6, rowsPerSecond: Math.ceil(rows / runSeconds), ...(fault === 'statement-timeout' ? { statementTimeoutSeconds: 1 } : {}) };
  writeFileSync(
    specFile,
    stringify({
      name,
      reason: `chaos: ${fault}`,
      database: DB_VAR,
      source: { table: 'chaos.orders', key: 'id', where: "status <> 'void'" },
      partition: { by: 'range', column: 'id', size: Math.ceil(rows / (longRun ? LONG_RUN_PARTITIONS : 40)) },
      transform: {
        name: 'usd',
        version: 1,
        sql: 'SELECT c.id, c.tenant, c.created_at, round(c.amount_cents * f.usd_rate / 100.0, 2) AS amount_usd FROM chunk c LEFT JOIN chaos.fx f USING (currency)',
      },
      target: { table: 'chaos.orders_usd', key: ['id'], mode: 'upsert' },
      limits,
    }),
  );
  // the worker processes (started, or restarted by the case before) may still be coming up on a loaded machine
  await untilDatabaseServed(env.client.workflow, TASK_QUEUE, DB_VAR, env.pool);
  const crashesBefore = env.workers.crashes;
  const started = Date.now();
  // a killed worker's partition is retried elsewhere once its heartbeat lapses: 3 s here (default 15 s);
  // the long run continues as new every ~500 events (~100 partitions) instead of every 9,000
  const run = await startRun(
    { client: env.client, taskQueue: TASK_QUEUE },
    { specFile, actor: 'chaos', partitionHeartbeatTimeoutMs: 3000, ...(longRun ? { maxHistoryEvents: 500 } : {}) },
  );
  const notes: string[] = [];
  let injected = '';
  let faultEnd = 0;
  let longestStallSeconds: number | undefined;
  const finished = followRun(env.pool, run.runId, () => undefined, {
    intervalMs: 250,
    outageMs: 5 * 60_000,
    onOutage: (m) => {
      if (m && !notes.includes(OUTAGE_NOTE)) notes.push(OUTAGE_NOTE);
    },
  });
  await untilShare(env.pool, run.runId, 0.25);

  switch (fault) {
    case 'kill-workers': {
      for (let i = 0; i < 10; i++) {
        env.workers.killOne();
        await sleep(600);
      }
      injected = `${WORKERS} workers; 10 SIGKILLs 0.6 s apart, each replaced`;
      break;
    }
    case 'temporal-restart':
      await env.restartTemporal(3000);
      injected = 'dev server SIGKILLed, restarted on its SQLite file 3 s later';
      break;
    case 'postgres-restart':
      await env.restartPostgres();
      injected = 'PostgreSQL stopped in immediate mode (SIGQUIT) and started again (crash recovery)';
      break;
    case 'terminate-backends': {
      let terminated = 0;
      // chunks take milliseconds between rows/s waits: look every 50 ms for 5 s to catch them mid-work
      for (let i = 0; i < 100; i++) {
        const { rows: t } = await env.pool.query<{ n: number }>(
          // mid-statement or mid-transaction (between a chunk's statements), never the idle ones in the pools
          "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'backfill' AND state IN ('active', 'idle in transaction') AND pid <> pg_backend_pid()",
        );
        terminated += t[0].n;
        await sleep(50);
      }
      injected = `pg_terminate_backend on the workers' backends in a statement or a transaction, looked for every 50 ms for 5 s (${terminated} terminated)`;
      break;
    }
    case 'db-network':
      await env.dbProxy.cut();
      await sleep(5000);
      await env.dbProxy.restore();
      injected = 'every worker connection to PostgreSQL dropped, new ones refused, for 5 s';
      break;
    case 'db-partition':
      // longer than a connection attempt may wait (CONNECT_TIMEOUT_MS): new connections fail, open ones wait it out
      env.dbProxy.stall();
      await sleep(CONNECT_TIMEOUT_MS + 5000);
      env.dbProxy.unstall();
      injected = `nothing passes between the workers and PostgreSQL, in either direction, for ${(CONNECT_TIMEOUT_MS + 5000) / 1000} s (no reset: a partition)`;
      break;
    case 'temporal-partition':
      env.temporalProxy.stall();
      await sleep(10_000);
      env.temporalProxy.unstall();
      injected = 'nothing passes between the workers and Temporal for 10 s (no reset), while chunks keep committing';
      break;
    case 'temporal-network':
      await env.temporalProxy.cut();
      await sleep(5000);
      await env.temporalProxy.restore();
      injected = 'every worker connection to Temporal dropped, new ones refused, for 5 s (chunks in flight commit without it)';
      break;
    case 'lock-contention': {
      const blocker = await env.pool.connect();
      try {
        await blocker.query('BEGIN; LOCK TABLE chaos.orders_usd IN SHARE ROW EXCLUSIVE MODE');
        await sleep(5000);
      } finally {
        await blocker.query('ROLLBACK').catch(() => undefined);
        blocker.release();
      }
      injected = 'the target locked against writes for 5 s (chunks give up each wait after lock_timeout, 2 s, and try again)';
      break;
    }
    case 'statement-timeout': {
      // the target turns slow (a row trigger, as an application might add): a chunk of the
      // spec's size now runs past limits.statementTimeoutSeconds (1 s) and must shrink, not fail
      await env.pool.query(`
        CREATE OR REPLACE FUNCTION chaos.slow_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END $$;
        CREATE TRIGGER slow_row BEFORE INSERT OR UPDATE ON chaos.orders_usd FOR EACH ROW EXECUTE FUNCTION chaos.slow_row()`);
      await sleep(6000);
      await env.pool.query('DROP TRIGGER slow_row ON chaos.orders_usd');
      const { rows: smaller } = await env.pool.query<{ n: number; min: number | null }>(
        "SELECT count(*)::int AS n, min(chunk_size) AS min FROM backfill.chunks WHERE run_id = $1 AND governed_by = 'statementTimeoutSeconds'",
        [run.runId],
      );
      notes.push(`${smaller[0].n} chunks written smaller after timeouts (down to ${smaller[0].min ?? '—'} rows from ${chunkSize})`);
      injected = `every target row write sleeping 10 ms for 6 s: a ${chunkSize}-row chunk takes ${(chunkSize / 100).toFixed(1)} s against a 1 s statement_timeout`;
      break;
    }
    case 'deadlock': {
      const before = await deadlockCount(env.pool);
      const victims = await provokeDeadlocks(env.pool, run.runId, chunkSize, 5000);
      const detected = (await deadlockCount(env.pool)) - before;
      notes.push(`${detected} deadlocks detected by PostgreSQL; the application's transaction was the victim of ${victims}, the chunk of the rest`);
      injected =
        "for 5 s, an application transaction inserting the far end of a running partition's next chunk, then its near end (the reverse of the chunk's order), and rolling back";
      break;
    }
    case 'long-run': {
      // outside the allowed hours from the next minute on: the run holds until then
      const row = (await getRun(env.pool, run.runId))!;
      const opensAt = Math.floor((Date.now() + 60_000) / 60_000) * 60_000;
      await setRunLimits({ client: env.client }, row, {
        window: { start: hhmm(opensAt), end: hhmm(opensAt + 6 * 3600_000), timeZone: 'UTC' },
        actor: 'chaos',
        reason: 'allowed hours moved',
      });
      let kills = 0;
      let done = false;
      void finished.finally(() => (done = true));
      const killing = (async () => {
        while (!done) {
          env.workers.killOne();
          kills++;
          await sleep(LONG_RUN_KILL_MS);
        }
      })();
      // this case has no deadline of its own (it waits for its run): a run still going after 6 minutes says what it waits for
      const slow = setTimeout(() => {
        void stuckRunReport(env.pool, env.client, run.runId, run.workflowId).then((lines) => lines.forEach((line) => say(`chaos: ${fault}: slow, ${line}`)));
      }, 6 * 60_000);
      await finished;
      clearTimeout(slow);
      await killing;
      // recovery for this case: from the window's opening to the next chunk
      faultEnd = opensAt;
      const { rows: gap } = await env.pool.query<{ s: number | null }>(
        `SELECT max(extract(epoch FROM gap)) AS s
           FROM (SELECT committed_at - lag(committed_at) OVER (ORDER BY committed_at) AS gap FROM backfill.chunks WHERE run_id = $1) g`,
        [run.runId],
      );
      longestStallSeconds = Number(gap[0].s ?? 0);
      notes.push(
        `${await executions(env.client, run.handle.workflowId, run.handle.firstExecutionRunId)} executions (continue-as-new), ${kills} worker SIGKILLs ${LONG_RUN_KILL_MS / 1000} s apart; ` +
          `no chunk committed for ${longestStallSeconds.toFixed(0)} s around the closed hours`,
      );
      injected = `${LONG_RUN_PARTITIONS.toLocaleString('en-US')} partitions at a low rows/s cap; a quarter in, the allowed hours moved to start at the next minute (the run held until then); a worker SIGKILLed at intervals to the end`;
      break;
    }
    case 'disk-full': {
      await env.pool.query(`
        CREATE OR REPLACE FUNCTION chaos.disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
        CREATE TRIGGER disk_full BEFORE INSERT OR UPDATE ON chaos.orders_usd FOR EACH ROW EXECUTE FUNCTION chaos.disk_full()`);
      // a state, not a time: on a loaded machine the pause (chunk -> partition -> run -> ledger) took
      // over a minute once, and space freed before it landed left the run paused with nobody to resume it
      const triggered = Date.now();
      const isPaused = async () => (await getRun(env.pool, run.runId))?.paused === true;
      const resume = async () =>
        controlRun({ client: env.client, pool: env.pool }, (await getRun(env.pool, run.runId))!, 'resume', { actor: 'chaos', reason: 'space freed' });
      const paused = await until(isPaused, CASE_DEADLINE_MS);
      await env.pool.query('DROP TRIGGER disk_full ON chaos.orders_usd');
      if (paused) {
        await resume();
        notes.push(`the run paused itself with the reason (${((Date.now() - triggered) / 1000).toFixed(0)} s after the disk filled); an operator resumed it`);
      } else {
        // on a machine loaded twice over, the pause (chunk -> partition -> run -> ledger) once landed
        // after the case stopped waiting for it: an operator who freed the space still resumes it then
        notes.push(`the run did not pause within ${CASE_DEADLINE_MS / 1000} s`);
        let ended = false;
        void finished.then(() => (ended = true));
        void (async () => {
          const late = await until(async () => ended || (await isPaused()), CASE_DEADLINE_MS);
          if (late && !ended && (await isPaused())) {
            await resume().catch(() => undefined);
            notes.push(`it paused ${((Date.now() - triggered) / 1000).toFixed(0)} s after the disk filled, with space already freed; an operator resumed it`);
          }
        })();
      }
      injected = 'the target refusing writes with SQLSTATE 53100 (disk full) until the run paused; then space freed and resumed';
      break;
    }
  }
  if (!longRun) faultEnd = Date.now();
  const recoveryMs = await recovery(
    env.pool,
    run.runId,
    faultEnd,
    'SELECT min(committed_at) FROM backfill.chunks WHERE run_id = $1 AND committed_at > to_timestamp($2 / 1000.0)',
  );
  const nextPartitionMs = await recovery(
    env.pool,
    run.runId,
    faultEnd,
    'SELECT min(started_at) FROM backfill.partitions WHERE run_id = $1 AND started_at > to_timestamp($2 / 1000.0)',
  );
  const status = await Promise.race([finished, deadline(CASE_DEADLINE_MS).then(() => 'timed out')]);
  if (status === 'timed out') {
    // what it waited for, before the cancel changes it: a flake seen only on CI is read from its log
    for (const line of await stuckRunReport(env.pool, env.client, run.runId, run.workflowId)) say(`chaos: ${fault}: ${line}`);
    // the next case needs the target: this run is cancelled, saying why
    const row = await getRun(env.pool, run.runId);
    if (row)
      await controlRun({ client: env.client, pool: env.pool }, row, 'cancel', { actor: 'chaos', reason: 'did not finish within 5 minutes' }).catch(
        () => undefined,
      );
    const ended = await Promise.race([finished.then(() => true), deadline(60_000).then(() => false)]);
    if (!ended) for (const line of await stuckRunReport(env.pool, env.client, run.runId, run.workflowId)) say(`chaos: ${fault}: after the cancel, ${line}`);
    notes.push('did not finish within 5 minutes: cancelled');
  }
  const seconds = (Date.now() - started) / 1000;
  const diff = await compare(env.pool);
  const ledgerProblems = await ledgerCheck(env.pool, run.runId);
  const crashes = env.workers.crashes - crashesBefore;
  if (crashes > 0) notes.push(`${crashes} worker process(es) crashed`);
  const { rows: read } = await env.pool.query<{ n: string }>('SELECT coalesce(sum(rows_read), 0) AS n FROM backfill.partitions WHERE run_id = $1', [run.runId]);
  say(`chaos: ${fault} done`);
  return {
    fault,
    injected,
    seconds,
    recoveryMs,
    nextPartitionMs,
    rows: Number(read[0].n),
    ...diff,
    ledgerProblems,
    status: String(status),
    notes,
    workerCrashes: crashes,
    ...(longestStallSeconds !== undefined ? { longestStallSeconds } : {}),
  };
}

/** Waits until the run has read `share` of its planned rows. */
async function untilShare(pool: pg.Pool, runId: string, share: number): Promise<void> {
  await until(async () => {
    const { rows } = await pool.query<{ read: string; planned: string }>(
      'SELECT (SELECT coalesce(sum(rows_read), 0) FROM backfill.partitions WHERE run_id = $1) AS read, (SELECT rows_planned FROM backfill.runs WHERE run_id = $1) AS planned',
      [runId],
    );
    return Number(rows[0].read) >= share * Number(rows[0].planned);
  }, 120_000);
}

/** From the end of the fault to the first event `firstAfter` finds after it; null when none came (the run had finished). */
async function recovery(pool: pg.Pool, runId: string, since: number, firstAfter: string): Promise<number | null> {
  let at: number | null = null;
  await until(async () => {
    try {
      const { rows } = await pool.query<{ at: Date | null; active: boolean }>(
        `SELECT (${firstAfter}) AS at, (SELECT status IN ('running', 'paused', 'pending', 'cancelling') FROM backfill.runs WHERE run_id = $1) AS active`,
        [runId, since],
      );
      if (rows[0].at) at = rows[0].at.getTime();
      return rows[0].at !== null || !rows[0].active;
    } catch {
      return false; // the database is still coming back
    }
  }, 5 * 60_000);
  return at === null ? null : Math.max(0, at - since);
}

async function compare(pool: pg.Pool): Promise<{ missing: number; extra: number }> {
  const { rows } = await pool.query<{ missing: string; extra: string }>(`
    WITH e AS (${REFERENCE}), t AS (SELECT id, tenant, created_at, amount_usd FROM chaos.orders_usd)
    SELECT (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM t) x) AS missing,
           (SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM e) x) AS extra`);
  return { missing: Number(rows[0].missing), extra: Number(rows[0].extra) };
}

/**
 * The ledger as an auditor reads it: every partition succeeded exactly once; each partition's
 * chunks numbered 1..n, each starting where the previous ended (the first at the partition's
 * start); chunk rows adding up to the partition's, and partitions' to what the target holds.
 */
export async function ledgerCheck(pool: pg.Pool, runId: string, target = 'chaos.orders_usd'): Promise<string[]> {
  const problems: string[] = [];
  const { rows: partitions } = await pool.query<{ partition_id: string; status: string; completions: number; rows_read: string; chunks: number }>(
    'SELECT partition_id, status, completions, rows_read, chunks FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal',
    [runId],
  );
  for (const p of partitions) {
    if (p.status !== 'succeeded' || p.completions !== 1) problems.push(`partition ${p.partition_id}: ${p.status}, ${p.completions} completion(s)`);
  }
  const { rows: chunks } = await pool.query<{ partition_id: string; seq: number; key_from: string | null; key_to: string | null; rows_read: string }>(
    'SELECT partition_id, seq, key_from, key_to, rows_read FROM backfill.chunks WHERE run_id = $1 ORDER BY partition_id, seq',
    [runId],
  );
  const byPartition = new Map<string, typeof chunks>();
  for (const c of chunks) byPartition.set(c.partition_id, [...(byPartition.get(c.partition_id) ?? []), c]);
  for (const p of partitions) {
    const log = byPartition.get(p.partition_id) ?? [];
    log.forEach((c, i) => {
      if (c.seq !== i + 1) problems.push(`partition ${p.partition_id}: chunk ${i + 1} is numbered ${c.seq}`);
      const expectedFrom = i === 0 ? null : log[i - 1].key_to;
      if (c.key_from !== expectedFrom)
        problems.push(`partition ${p.partition_id}: chunk ${c.seq} starts after ${c.key_from}, the previous ended at ${expectedFrom}`);
    });
    const sum = log.reduce((n, c) => n + Number(c.rows_read), 0);
    if (sum !== Number(p.rows_read)) problems.push(`partition ${p.partition_id}: its chunks read ${sum} rows, the partition says ${p.rows_read}`);
    if (log.length !== p.chunks) problems.push(`partition ${p.partition_id}: ${log.length} chunks logged, the partition says ${p.chunks}`);
  }
  const { rows: totals } = await pool.query<{ read: string; target: string }>(
    `SELECT (SELECT coalesce(sum(rows_read), 0) FROM backfill.partitions WHERE run_id = $1) AS read, (SELECT count(*) FROM ${target}) AS target`,
    [runId],
  );
  if (totals[0].read !== totals[0].target) problems.push(`the partitions read ${totals[0].read} rows, the target holds ${totals[0].target}`);
  problems.push(...(await imageCheck(pool, runId)));
  return problems;
}

/**
 * A run that keeps before-images has exactly one per row it wrote: a chunk rolled back by a
 * fault left none behind, a retried one none twice.
 */
async function imageCheck(pool: pg.Pool, runId: string): Promise<string[]> {
  const { rows: run } = await pool.query<{ undo_table: string | null; key: string[]; written: string }>(
    `SELECT undo_table, ARRAY(SELECT jsonb_array_elements_text(spec->'target'->'key')) AS key,
            (SELECT coalesce(sum(rows_written), 0) FROM backfill.partitions p WHERE p.run_id = r.run_id) AS written
       FROM backfill.runs r WHERE run_id = $1`,
    [runId],
  );
  if (!run[0]?.undo_table) return [];
  const key = run[0].key.map((c) => `i."${c}"`).join(', ');
  // one SQL row per imaged target row, whichever layout the run keeps them in
  const { rows } = await pool.query<{ n: string; keys: string }>(
    `SELECT count(*) AS n, count(DISTINCT (${key}, true)) AS keys FROM ${await runImages(pool, runId)} i`,
  );
  const problems: string[] = [];
  if (rows[0].n !== run[0].written) problems.push(`the run wrote ${run[0].written} rows and kept ${rows[0].n} before-images`);
  if (rows[0].keys !== rows[0].n) problems.push(`${Number(rows[0].n) - Number(rows[0].keys)} before-image(s) repeat a key`);
  return problems;
}

/** HH:MM in UTC at epoch milliseconds `ms`. */
function hhmm(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

async function deadlockCount(pool: pg.Pool): Promise<number> {
  // the statistics collector reports with a delay of up to a second
  await sleep(1000);
  const { rows } = await pool.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0].n);
}

/**
 * An application transaction that takes a running partition's next chunk's rows in the
 * reverse order: the far end first, then (after the chunk has begun and holds the near end)
 * the near end. PostgreSQL breaks the cycle after deadlock_timeout by aborting one side.
 * Returns how often the application's side was the one aborted.
 */
async function provokeDeadlocks(pool: pg.Pool, runId: string, chunkSize: number, forMs: number): Promise<number> {
  const app = await pool.connect();
  let victims = 0;
  const until = Date.now() + forMs;
  try {
    while (Date.now() < until) {
      const { rows: running } = await app.query<{ after: string; hi: string }>(
        `SELECT coalesce(cursor, ((bounds->>'lo')::bigint - 1)::text) AS after, bounds->>'hi' AS hi
           FROM backfill.partitions WHERE run_id = $1 AND status = 'running' ORDER BY random() LIMIT 1`,
        [runId],
      );
      if (running.length === 0) {
        await sleep(100);
        continue;
      }
      const { rows: keys } = await app.query<{ id: string }>(
        "SELECT id FROM chaos.orders WHERE id > $1 AND id < $2 AND status <> 'void' ORDER BY id LIMIT $3",
        [running[0].after, running[0].hi, Math.floor(chunkSize * 0.8)],
      );
      if (keys.length < 2) continue;
      try {
        await app.query('BEGIN');
        await app.query('INSERT INTO chaos.orders_usd (id) VALUES ($1) ON CONFLICT DO NOTHING', [keys[keys.length - 1].id]);
        await sleep(300);
        await app.query('INSERT INTO chaos.orders_usd (id) VALUES ($1) ON CONFLICT DO NOTHING', [keys[0].id]);
      } catch (err) {
        if ((err as { code?: string }).code === '40P01') victims++;
        else throw err;
      } finally {
        await app.query('ROLLBACK');
      }
    }
  } finally {
    app.release();
  }
  return victims;
}

/** How many executions a workflow ran, following continue-as-new. */
async function executions(client: Client, workflowId: string, firstRunId: string): Promise<number> {
  let runId: string | undefined = firstRunId;
  let n = 0;
  while (runId) {
    const events: temporal.api.history.v1.IHistoryEvent[] = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    n++;
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return n;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await sleep(100);
  }
  return false;
}

/** How long a case's run (and each state it waits for) may take before the case is failed as timed out. */
const CASE_DEADLINE_MS = 5 * 60_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A timer for races: it does not keep the process alive once everything else is done. */
const deadline = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function faultTable(results: CaseResult[]): string {
  return [
    '| fault | what was done | run (s) | next chunk after the fault (ms) | next partition started (ms) | rows | target vs reference | ledger | notes |',
    '|---|---|---:|---:|---:|---:|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.fault} | ${r.injected} | ${r.seconds.toFixed(1)} | ${r.recoveryMs ?? '—'} | ${r.nextPartitionMs ?? '—'} | ${r.rows.toLocaleString('en-US')} | ` +
        `${r.missing === 0 && r.extra === 0 ? 'identical' : `${r.missing} missing, ${r.extra} extra`} | ${r.ledgerProblems.length === 0 ? 'consistent' : r.ledgerProblems.slice(0, 3).join('; ')} | ${[r.status, ...r.notes].join('; ')} |`,
    ),
  ].join('\n');
}

export function caseFailed(r: CaseResult): boolean {
  return r.status !== 'succeeded' || r.missing !== 0 || r.extra !== 0 || r.ledgerProblems.length > 0 || r.workerCrashes > 0;
}

if (require.main === module) {
  const cases = (process.env.CHAOS_CASES ? process.env.CHAOS_CASES.split(',') : CASES) as ChaosCase[];
  runChaos({ rows: Number(process.env.CHAOS_ROWS || 200_000), runSeconds: Number(process.env.CHAOS_RUN_SECONDS || 20), cases })
    .then((results) => {
      process.stdout.write(process.env.CHAOS_OUTPUT === 'json' ? `${JSON.stringify(results)}\n` : `${faultTable(results)}\n`);
      if (results.some(caseFailed)) process.exitCode = 1;
    })
    .catch((err) => {
      process.stderr.write(`${(err as Error).stack ?? err}\n`);
      process.exit(1);
    });
}
