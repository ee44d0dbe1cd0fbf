/**
 * Fleets: what one run over many databases costs beyond the runs themselves. In one invocation,
 * on one PostgreSQL server holding FLEET_MEMBERS member databases (each its own ledger and data)
 * and one dev server, with one worker process serving every member (BACKFILL_DATABASES=BENCH_FLEET_DB_*):
 *   (seq)   N single-database runs of the same spec, one after another;
 *   (side)  the same N runs side by side, FLEET_CONCURRENCY at a time;
 *   (fleet) one fleet of the N members, FLEET_CONCURRENCY at a time, in one wave.
 * Each part writes the same rows (the targets are emptied between parts). Per member: wall time
 * over N; the fleet's overhead per member against the side-by-side runs. Also the fleet
 * workflow's history (events, bytes). Prints a Markdown table; bench/RESULTS.md keeps it.
 * Run: npm run bench:fleet   FLEET_MEMBERS (100), FLEET_ROWS (10000 per member), FLEET_CONCURRENCY (10)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { createPool } from '../src/db/pool';
import { ensureDatabase } from '../src/dev/postgres';
import { startFleet } from '../src/fleet/start-fleet';
import { waitForFleet } from '../src/fleet/fleet-result';
import { startRun, waitForResult } from '../src/operations';
import { inParallel } from '../src/util/in-parallel';
import { say, startBenchEnvironment, startWorkerProcesses, untilPolling } from './harness';

const MEMBERS = Number(process.env.FLEET_MEMBERS || 100);
const ROWS = Number(process.env.FLEET_ROWS || 10_000);
const CONCURRENCY = Number(process.env.FLEET_CONCURRENCY || 10);

const variable = (i: number) => `BENCH_FLEET_DB_${String(i + 1).padStart(3, '0')}`;
const VARIABLES = Array.from({ length: MEMBERS }, (_, i) => variable(i));

const SPEC = {
  reason: 'benchmark',
  source: { table: 'bench.orders', key: 'id' },
  partition: { by: 'range', column: 'id', size: Math.ceil(ROWS / 4) },
  transform: {
    name: 'usd',
    version: 1,
    sql: 'SELECT c.id, round(c.amount_cents * r.usd_rate / 100.0, 2) AS amount_usd FROM chunk c JOIN bench.fx r USING (currency)',
  },
  target: { table: 'bench.orders_usd', key: ['id'], mode: 'upsert' },
  limits: { chunkSize: 5_000, concurrency: 2 },
};

async function createMember(serverUrl: string, i: number): Promise<void> {
  const url = await ensureDatabase(serverUrl, `bench_fleet_${String(i + 1).padStart(3, '0')}`);
  process.env[variable(i)] = url;
  const pool = createPool(url, { max: 1 });
  try {
    await pool.query(`
      DROP SCHEMA IF EXISTS bench CASCADE; DROP SCHEMA IF EXISTS backfill CASCADE;
      CREATE SCHEMA bench;
      CREATE TABLE bench.fx (currency text PRIMARY KEY, usd_rate numeric NOT NULL);
      INSERT INTO bench.fx VALUES ('USD', 1), ('EUR', 1.08), ('GBP', 1.27);
      CREATE TABLE bench.orders (id bigint PRIMARY KEY, currency text NOT NULL, amount_cents bigint NOT NULL);
      INSERT INTO bench.orders SELECT n, (ARRAY['USD','EUR','GBP'])[1 + n % 3], 100 + n % 90000 FROM generate_series(1, ${ROWS}) n;
      CREATE TABLE bench.orders_usd (id bigint PRIMARY KEY, amount_usd numeric);
      ANALYZE bench.orders;`);
  } finally {
    await pool.end();
  }
}

async function emptyTargets(): Promise<void> {
  await inParallel(VARIABLES, 8, async (v) => {
    const pool = createPool(process.env[v]!, { max: 1 });
    await pool.query('TRUNCATE bench.orders_usd').finally(() => pool.end());
  });
}

async function rowsWritten(): Promise<number> {
  const counts = await inParallel(VARIABLES, 8, async (v) => {
    const pool = createPool(process.env[v]!, { max: 1 });
    try {
      return Number((await pool.query('SELECT count(*) AS n FROM bench.orders_usd')).rows[0].n);
    } finally {
      await pool.end();
    }
  });
  return counts.reduce((a, b) => a + b, 0);
}

async function main(): Promise<void> {
  // a worker keeps a pool per member database: 100 members hold more than the default 100 connections
  const env = await startBenchEnvironment({ dataset: false, noWorkers: true, postgresSettings: { max_connections: String(Math.max(200, MEMBERS * 4)) } });
  const serverUrl = env.url.replace(/\/[^/]+$/, '/postgres');
  const specDir = mkdtempSync(path.join(os.tmpdir(), 'backfill-bench-fleet-'));
  const temporal = { client: env.client, taskQueue: 'bench' };
  say(`${MEMBERS} member databases of ${ROWS} rows…`);
  await inParallel(
    Array.from({ length: MEMBERS }, (_, i) => i),
    4,
    (i) => createMember(serverUrl, i),
  );
  // one worker process serving every member, as a worker next to a cluster of tenant databases runs
  const workers = startWorkerProcesses(env.address, env.url, 1, 20, 'BENCH_FLEET_DB_*');
  try {
    await untilPolling(env.client, 1);
    const single = (v: string, name: string) => {
      const file = path.join(specDir, `${name}-${v}.yaml`);
      writeFileSync(file, stringify({ name, database: v, ...SPEC }));
      return async () => {
        const started = await startRun(temporal, { specFile: file, actor: 'bench' });
        const result = await waitForResult(started.handle);
        if (result.status !== 'succeeded') throw new Error(`${v}: run ${started.runId} ended ${result.status}`);
      };
    };
    // warm: every member's ledger made, every queue's worker up, every pool connected
    say('warm-up: one run per member…');
    await inParallel(VARIABLES, CONCURRENCY, (v) => single(v, 'fleet-bench-warm')());
    const rows: string[] = [];
    const time = async (label: string, work: () => Promise<void>) => {
      await emptyTargets();
      const t0 = process.hrtime.bigint();
      await work();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const written = await rowsWritten();
      if (written !== MEMBERS * ROWS) throw new Error(`${label}: ${written} rows in the targets, expected ${MEMBERS * ROWS}`);
      say(`${label}: ${seconds.toFixed(1)} s`);
      return seconds;
    };
    const seq = await time('seq', async () => {
      for (const v of VARIABLES) await single(v, 'fleet-bench-seq')();
    });
    const side = await time('side', () => inParallel(VARIABLES, CONCURRENCY, (v) => single(v, 'fleet-bench-side')()).then(() => undefined));
    const fleetFile = path.join(specDir, 'fleet.yaml');
    writeFileSync(fleetFile, stringify({ name: 'fleet-bench', databases: ['BENCH_FLEET_DB_*'], fleet: { concurrency: CONCURRENCY }, ...SPEC }));
    let workflowId = '';
    let startSeconds = 0;
    const fleet = await time('fleet', async () => {
      const t0 = process.hrtime.bigint();
      const started = await startFleet(temporal, { specFile: fleetFile, actor: 'bench' });
      // start checks and plans every member before the first one runs (a single run plans inside its own lane)
      startSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
      workflowId = started.workflowId;
      const result = await waitForFleet(started.handle);
      if (result.status !== 'succeeded') throw new Error(`fleet ${started.fleetId} ended ${result.status}`);
    });
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    const bytes = Buffer.byteLength(JSON.stringify(history));
    const total = MEMBERS * ROWS;
    rows.push(
      `| (seq) ${MEMBERS} runs one after another | ${seq.toFixed(1)} | ${(seq / MEMBERS).toFixed(2)} | ${Math.round(total / seq)} |`,
      `| (side) ${MEMBERS} runs, ${CONCURRENCY} at a time | ${side.toFixed(1)} | ${(side / MEMBERS).toFixed(2)} | ${Math.round(total / side)} |`,
      `| (fleet) one fleet, ${CONCURRENCY} members at a time | ${fleet.toFixed(1)} | ${(fleet / MEMBERS).toFixed(2)} | ${Math.round(total / fleet)} |`,
    );
    process.stdout.write(
      [
        `PostgreSQL ${env.version}, ${os.cpus().length} cores, ${MEMBERS} members × ${ROWS} rows (4 partitions each), one worker process`,
        '',
        '| part | wall s | s per member | rows/s |',
        '|---|---|---|---|',
        ...rows,
        '',
        `The fleet's start (every member checked and planned, ${MEMBERS} of them, 4 at a time) took ${startSeconds.toFixed(1)} s of its wall time. ` +
          `Fleet overhead against the same runs side by side: ${(((fleet - side) / MEMBERS) * 1000).toFixed(0)} ms per member (${((fleet / side - 1) * 100).toFixed(1)} %); ` +
          `fleet workflow history: ${history.events?.length ?? 0} events, ${(bytes / 1024).toFixed(0)} KiB (${(bytes / MEMBERS / 1024 || 0).toFixed(1)} KiB per member).`,
        '',
      ].join('\n'),
    );
  } catch (err) {
    // said before the services stop, whose shutdown may fail calls still in flight
    say(`fleet benchmark failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  } finally {
    await workers.stop();
    await env.stop().catch(() => undefined);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
