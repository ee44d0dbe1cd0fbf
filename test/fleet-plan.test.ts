/**
 * Planning a fleet (`databases:`) on three real PostgreSQL clusters, each its own process and
 * port: one table of members, waves and totals; a member whose schema differs is named with its
 * problem and the plan refused (exit 2) until it is excluded on purpose; two variables naming one
 * database are refused, by plan and start alike; each member's guards read on its own database.
 * Writes nothing.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { createPool } from '../src/db/pool';
import { databaseIdentity } from '../src/db/identity';
import { ensureDatabase } from '../src/dev/postgres';
import { runCli } from './helpers/cli';
import { startClusters, type Clusters } from './helpers/clusters';
import { createOrders, ordersSpec, writeSpec } from './helpers/orders';
import { startsFirst } from './helpers/turns';

startsFirst('three PostgreSQL clusters');

const VARS = ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_TENANT_A', 'BF_FLEETPLAN_TENANT_B'] as const;
let clusters: Clusters;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  clusters = await startClusters(VARS.length);
  for (const [i, variable] of VARS.entries()) {
    process.env[variable] = await ensureDatabase(clusters.urls[i], 'fleet_plan');
    const pool = createPool(process.env[variable]!, { max: 2 });
    pools.push(pool);
    await createOrders(pool, 3_000 * (i + 1));
  }
});

afterAll(async () => {
  for (const pool of pools) await pool.end();
  await clusters?.stop();
  for (const variable of [...VARS, 'BF_FLEETPLAN_TWIN']) delete process.env[variable];
});

function fleetSpec(extra: Record<string, unknown> = {}) {
  const { database: _one, ...spec } = ordersSpec('unused', { name: 'fleet-plan', partition: { by: 'range', column: 'id', size: 1_000 } });
  return writeSpec({ ...spec, databases: ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_TENANT_*'], fleet: { waves: [1, '100%'], concurrency: 2 }, ...extra });
}

async function nothingWritten(): Promise<void> {
  for (const pool of pools) {
    const { rows } = await pool.query("SELECT to_regnamespace('backfill') IS NULL AS none, (SELECT count(*)::int FROM app.orders_usd) AS target");
    expect(rows[0]).toEqual({ none: true, target: 0 });
  }
}

test('one table over every member: waves in order, families in name order, rows and partitions per member and in all', async () => {
  const json = await runCli(['plan', fleetSpec(), '-o', 'json']);
  expect(json.code).toBe(0);
  const plan = JSON.parse(json.stdout);
  expect(plan.members.map((m: { variable: string; wave: number }) => [m.variable, m.wave])).toEqual([
    ['BF_FLEETPLAN_US', 1],
    ['BF_FLEETPLAN_TENANT_A', 2],
    ['BF_FLEETPLAN_TENANT_B', 2],
  ]);
  // each cluster holds another number of orders: its own plan
  const partitions = plan.members.map((m: { partitions: number }) => m.partitions);
  expect(partitions[0]).toBeGreaterThan(0);
  expect(partitions[1]).toBeGreaterThan(partitions[0]);
  expect(partitions[2]).toBeGreaterThan(partitions[1]);
  const identities = await Promise.all(pools.map(async (p) => (await databaseIdentity(p)).id));
  expect(plan.members.map((m: { identity: string }) => m.identity)).toEqual(identities);
  expect(plan.totals).toMatchObject({ members: 3, planned: 3, excluded: 0, refused: 0, partitions: partitions[0] + partitions[1] + partitions[2] });
  expect(plan.totals.rows).toBe(plan.members.reduce((n: number, m: { rows: number }) => n + m.rows, 0));
  expect(plan.ok).toBe(true);

  const text = await runCli(['plan', fleetSpec()]);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/Fleet fleet-plan \(.*\): 3 member\(s\) in 2 wave\(s\)/);
  expect(text.stdout).toContain(`${partitions[0] + partitions[1] + partitions[2]} partitions over 3 member(s)`);
  await nothingWritten();
});

test("--measure-guards reads each member's guards on its own database and names the member where a threshold would slow the run; without a ledger, commitMs is left unmeasured and nothing is written", async () => {
  for (const [i, pool] of pools.entries())
    await pool.query(`CREATE TABLE app.signals (queue integer NOT NULL); INSERT INTO app.signals VALUES (${i === 2 ? 40 : 0})`);
  try {
    const { limits } = ordersSpec('unused', {});
    const spec = fleetSpec({ limits: { ...limits, guards: { custom: [{ name: 'queue', sql: 'SELECT queue FROM app.signals', soft: 10 }] } } });
    const json = await runCli(['plan', spec, '--measure-guards', '-o', 'json']);
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as {
      members: { variable: string; warnings: string[]; guards: { guards: { guard: string; p50: number }[]; unmeasured: { guard: string }[] } }[];
    };
    expect(plan.members.map((m) => [m.variable, m.guards.guards.map((g) => [g.guard, g.p50])])).toEqual([
      ['BF_FLEETPLAN_US', [['queue', 0]]],
      ['BF_FLEETPLAN_TENANT_A', [['queue', 0]]],
      ['BF_FLEETPLAN_TENANT_B', [['queue', 40]]],
    ]);
    for (const m of plan.members) expect(m.guards.unmeasured.map((u) => u.guard)).toEqual(['commitMs']);
    expect(plan.members.map((m) => m.warnings.filter((w) => w.startsWith('guards:')).length)).toEqual([0, 0, 1]);

    const text = await runCli(['plan', spec, '--measure-guards']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^BF_FLEETPLAN_TENANT_B: guards \(30 readings over [\d.]+ s, from where plan runs/m);
    expect(text.stdout).toMatch(/^ {2}commitMs: not measured: the ledger is not in this database yet .*backfill migrate --database BF_FLEETPLAN_US/m);
    expect(text.stdout).toMatch(/^BF_FLEETPLAN_TENANT_B: warning: guards: queue read over soft 10 in 30 of 30 readings/m);
    await nothingWritten();
  } finally {
    for (const pool of pools) await pool.query('DROP TABLE app.signals');
  }
});

test('a member whose schema differs is named with its problem and the plan refused, until excluded on purpose, with a reason', async () => {
  await pools[2].query('ALTER TABLE app.orders_usd RENAME COLUMN amount_usd TO amount');
  try {
    const refused = await runCli(['plan', fleetSpec()]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toMatch(/BF_FLEETPLAN_TENANT_B: transform outputs amount_usd, which app\.orders_usd does not have/);
    expect(refused.stdout).toContain('Refused: 1 member(s) cannot take this spec');
    expect(await runCli(['plan', fleetSpec(), '--exclude', 'BF_FLEETPLAN_TENANT_B'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--exclude needs --reason'),
    });
    expect(await runCli(['plan', fleetSpec(), '--exclude', 'BF_NOT_A_MEMBER', '--reason', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--exclude BF_NOT_A_MEMBER: not a member of fleet-plan'),
    });
    const excluded = await runCli(['plan', fleetSpec(), '--exclude', 'BF_FLEETPLAN_TENANT_B', '--reason', 'migrating this tenant next week', '-o', 'json']);
    expect(excluded.code).toBe(0);
    const plan = JSON.parse(excluded.stdout);
    expect(plan.members[2]).toMatchObject({ variable: 'BF_FLEETPLAN_TENANT_B', excluded: { reason: 'migrating this tenant next week' }, problems: [] });
    expect(plan.totals).toMatchObject({ members: 3, planned: 2, excluded: 1 });
    expect(plan.totals.partitions).toBe(plan.members[0].partitions + plan.members[1].partitions);
  } finally {
    await pools[2].query('ALTER TABLE app.orders_usd RENAME COLUMN amount TO amount_usd');
  }
});

test('two variables naming one database are refused, by plan and by start; a command of one database refuses a fleet spec; a refused plan is not saved', async () => {
  process.env.BF_FLEETPLAN_TWIN = process.env.BF_FLEETPLAN_US;
  const twice = await runCli(['plan', fleetSpec({ databases: ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_TWIN'] })]);
  expect(twice.code).toBe(2);
  expect(twice.stdout).toMatch(/BF_FLEETPLAN_US: databases BF_FLEETPLAN_US is the same database as BF_FLEETPLAN_TWIN \(identity/);

  // start plans the fleet first: refused alike, nothing started
  const start = await runCli(['start', fleetSpec({ databases: ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_TWIN'] })]);
  expect(start.code).toBe(2);
  expect(start.stderr).toMatch(/the fleet cannot start; every member must take the spec/);
  expect(start.stderr).toMatch(/BF_FLEETPLAN_TWIN: databases BF_FLEETPLAN_TWIN is the same database as BF_FLEETPLAN_US/);
  // a command that works on one database says so
  const verify = await runCli(['validate', fleetSpec()]);
  expect(verify.code).toBe(2);
  expect(verify.stderr).toContain('databases names a fleet of databases, which `backfill plan` and `backfill start` take as a fleet');
  const refusedSave = path.join(mkdtempSync(path.join(os.tmpdir(), 'fleet-plan-')), 'refused.json');
  expect(await runCli(['plan', fleetSpec({ databases: ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_TWIN'] }), '--save', refusedSave])).toMatchObject({ code: 2 });
  expect(existsSync(refusedSave)).toBe(false);
  await nothingWritten();
});

test('a saved fleet plan is what start --plan starts: a member whose data moved since is named with its difference, and nothing starts', async () => {
  const spec = fleetSpec();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'fleet-plan-')), 'fleet-plan.json');
  const saved = await runCli(['plan', spec, '--save', file, '--exclude', 'BF_FLEETPLAN_TENANT_B', '--reason', 'on a freeze']);
  expect(saved.code).toBe(0);
  expect(saved.stdout).toContain(`backfill start ${spec} --plan ${file} --approved-by <who approved>`);
  const plan = JSON.parse(readFileSync(file, 'utf8'));
  expect(plan).toMatchObject({ format: 'backfill-fleet-plan/1', name: 'fleet-plan', excluded: [{ variable: 'BF_FLEETPLAN_TENANT_B', reason: 'on a freeze' }] });
  expect(plan.members.map((m: { variable: string; plan: { database: { variable: string } } }) => [m.variable, m.plan.database.variable])).toEqual([
    ['BF_FLEETPLAN_US', 'BF_FLEETPLAN_US'],
    ['BF_FLEETPLAN_TENANT_A', 'BF_FLEETPLAN_TENANT_A'],
  ]);
  expect(JSON.stringify(plan)).not.toContain('postgres://');
  // another partition on TENANT_A since: its plan is not the approved one
  await pools[1].query("INSERT INTO app.orders VALUES (100000, now(), 1, 'USD', 100, 'paid')");
  try {
    const start = await runCli(['start', spec, '--plan', file, '--approved-by', 'alice']);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(
      new RegExp(`fleet-plan is not the fleet plan approved in ${file.replace(/[.]/g, '\\.')} \\(made by .*\\); nothing was started:`),
    );
    expect(start.stderr).toMatch(/ {2}- BF_FLEETPLAN_TENANT_A: .*partitions/);
    expect(start.stderr).not.toMatch(/- BF_FLEETPLAN_US:/);
    expect((await runCli(['start', spec, '--plan', file])).stderr).toMatch(/--plan needs --approved-by/);
    await nothingWritten();
  } finally {
    await pools[1].query('DELETE FROM app.orders WHERE id = 100000');
  }
});
