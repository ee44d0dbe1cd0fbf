/**
 * Approve, then run exactly that: `plan --save` writes the plan (hashes, partitions, input
 * fingerprints) and nothing in the database; `start --plan` refuses, naming the difference,
 * after a spec edit, an edit of a helper the TypeScript transform imports, a change in the
 * partitions and a change in a table the SQL transform reads — and starts, recording the plan
 * and its approver, when nothing changed. During a run, a change in what the transform reads
 * holds the run until an operator accepts it with a reason.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { controlRun, statusReportFor, waitForResult } from '../src/operations';
import { listEvents } from '../src/ledger/events';
import { getRun } from '../src/ledger/runs';
import type { SpecInput } from '../src/specs/schema';
import { pollUntil } from '../src/util/poll-until';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { diffAgainstExpected, EXPECTED_SQL, ordersSpec, TRANSFORM_SQL, writeSpec } from './helpers/orders';

const env = useTestEnvironment('approved', { rows: 30_000 });

const cli = (...args: string[]) => runCli(args, { BACKFILL_TASK_QUEUE: env.worker.taskQueue });
const planFile = () => path.join(mkdtempSync(path.join(os.tmpdir(), 'backfill-plan-')), 'plan.json');

function spec(name: string, overrides: Partial<SpecInput> = {}): SpecInput {
  return ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 60_000 }, ...overrides });
}

async function runsOf(name: string): Promise<number> {
  const { rows } = await env.db.pool.query("SELECT to_regclass('backfill.runs') IS NOT NULL AS t");
  if (!rows[0].t) return 0;
  return Number((await env.db.pool.query('SELECT count(*) AS n FROM backfill.runs WHERE name = $1', [name])).rows[0].n);
}

test('plan --save writes the plan and nothing in the database; start --plan refuses each difference and starts the approved plan, recording who approved it', async () => {
  const specFile = writeSpec(spec('approved-sql'));
  const saved = planFile();
  const before = await env.db.pool.query(
    "SELECT (SELECT count(*) FROM app.orders_usd) AS n, (SELECT max(xmin::text::bigint) FROM app.fx) AS x, to_regclass('backfill.runs') AS ledger",
  );

  const plan = await cli('plan', specFile, '--save', saved, '-o', 'json');
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  const shown = JSON.parse(plan.stdout);
  const inScope = Number((await env.db.pool.query("SELECT count(*) AS n FROM app.orders WHERE status <> 'void'")).rows[0].n);
  // an empty target: every sampled row is an insert
  expect(shown.estimate).toMatchObject({
    scope: { rows: inScope, exact: true, rowsPerPartition: Math.round(inScope / 2) },
    sample: { inserts: expect.any(Number), updates: 0, unchanged: 0 },
    projected: { inserts: inScope, updates: 0, unchanged: 0, lowerBound: true },
  });
  expect(shown.estimate.sample.rows).toBe(shown.estimate.sample.inserts);
  expect(shown.estimate.preview).toHaveLength(5);
  expect(shown.estimate.preview[0]).toMatchObject({ change: 'insert', current: null, computed: { id: expect.any(String), amount_usd: expect.anything() } });
  expect(shown.inputs).toEqual([expect.objectContaining({ name: 'app.fx', kind: 'table', rows: 4 })]);
  expect(JSON.parse(readFileSync(saved, 'utf8'))).toMatchObject({
    format: 'backfill-plan/1',
    name: 'approved-sql',
    specHash: shown.specHash,
    partitions: { count: 2, first: shown.partitions[0].id, last: shown.partitions[1].id, digest: shown.partitionsDigest },
    inputs: [expect.objectContaining({ name: 'app.fx', rows: 4 })],
  });
  // plan wrote nothing: no ledger, no target row, the reference table untouched
  expect(
    (
      await env.db.pool.query(
        "SELECT (SELECT count(*) FROM app.orders_usd) AS n, (SELECT max(xmin::text::bigint) FROM app.fx) AS x, to_regclass('backfill.runs') AS ledger",
      )
    ).rows,
  ).toEqual(before.rows);

  const refused = async (file: string, expected: RegExp) => {
    const started = await cli('start', file, '--plan', saved, '--approved-by', 'alice');
    expect(started.stderr).toMatch(expected);
    expect(started.stderr).toMatch(/nothing was started/);
    expect(started.code).toBe(2);
    expect(await runsOf('approved-sql')).toBe(0);
  };

  const noApprover = await cli('start', specFile, '--plan', saved);
  expect(noApprover).toMatchObject({ code: 2, stderr: expect.stringMatching(/--plan needs --approved-by/) });

  // a spec edit
  await refused(writeSpec(spec('approved-sql', { reason: 'another reason' })), /the spec changed: hash [0-9a-f]{12} approved, [0-9a-f]{12} now/);
  // the reference table the transform joins
  await env.db.pool.query("UPDATE app.fx SET usd_rate = 1.09 WHERE currency = 'EUR'");
  await refused(specFile, /input table app\.fx has rows with other values/);
  await env.db.pool.query("UPDATE app.fx SET usd_rate = 1.0832 WHERE currency = 'EUR'");
  await env.db.pool.query("INSERT INTO app.fx VALUES ('CHF', 1.1)");
  await refused(specFile, /input table app\.fx has 5 rows, 4 in the approved plan/);
  await env.db.pool.query("DELETE FROM app.fx WHERE currency = 'CHF'");
  // new source rows beyond the planned range: one more partition
  await env.db.pool.query("INSERT INTO app.orders VALUES (150000, '2024-03-05', 1, 'USD', 100, 'paid')");
  await refused(specFile, /the plan has 3 partitions now, 2 approved/);
  await env.db.pool.query('DELETE FROM app.orders WHERE id = 150000');

  // unchanged: it starts, and the run keeps the plan and its approver
  const ok = await cli('start', specFile, '--plan', saved, '--approved-by', 'alice', '--wait', '-o', 'json');
  expect(ok.code).toBe(0);
  // progress is told in rows against the rows in scope
  expect(ok.stderr).toMatch(new RegExp(`2/2 partitions, ${inScope} rows read of ${inScope} planned \\(100 %\\)`));
  const { rows } = await env.db.pool.query(
    'SELECT run_id, approved_by, approved_plan, server_version, engine_version, input_fingerprints, rows_planned, rows_planned_exact FROM backfill.runs WHERE name = $1',
    ['approved-sql'],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    approved_by: 'alice',
    approved_plan: { specHash: shown.specHash, partitions: { digest: shown.partitionsDigest } },
    server_version: expect.stringMatching(/^PostgreSQL \d+/),
    engine_version: expect.stringMatching(/^backfill \d+\.\d+\.\d+/),
    input_fingerprints: [expect.objectContaining({ name: 'app.fx', rows: 4 })],
    rows_planned: String(inScope),
    rows_planned_exact: true,
  });
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
});

test('plan --measure-writes writes its sample chunks and rolls them back: the target is as it was; the preview shows current beside computed', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  await env.db.pool.query(`INSERT INTO app.orders_usd SELECT * FROM (${EXPECTED_SQL}) e`);
  // a few wrong rows, in the first sampled chunk
  await env.db.pool.query('UPDATE app.orders_usd SET amount_usd = -1 WHERE id IN (SELECT id FROM app.orders_usd ORDER BY id LIMIT 3)');
  const mark = async () => (await env.db.pool.query('SELECT count(*) AS n, max(xmin::text::bigint) AS x, sum(amount_usd) AS s FROM app.orders_usd')).rows[0];
  const before = await mark();

  const plan = await cli('plan', writeSpec(spec('approved-measure')), '--measure-writes', '-o', 'json');
  expect(plan.code).toBe(0);
  const { estimate } = JSON.parse(plan.stdout);
  expect(await mark()).toEqual(before);
  expect(estimate.sample).toMatchObject({ updates: 3, inserts: 0, walBytes: expect.any(Number), writeMs: expect.any(Number) });
  expect(estimate.sample.walBytes).toBeGreaterThan(0);
  expect(estimate.projected.lowerBound).toBe(false);
  // the projection scales the measured writes to the whole scope: more rows than sampled, more seconds
  const { sample, projected, scope } = estimate;
  expect(projected.writeSeconds).toBeGreaterThan(0);
  expect(projected.walBytes).toBe(Math.round(scope.rows * (sample.walBytes / sample.rows)));
  expect(projected.durationSeconds).toBeGreaterThanOrEqual(projected.writeSeconds + projected.fixedSeconds);
  // and it says what it takes for granted: the run's concurrency and the workers' slots, the database's load, Temporal's cost
  expect(projected.assumes).toEqual([
    expect.stringMatching(/^\d+ partitions in flight \(limits\.concurrency\), on workers with at least \d+ activity slots/),
    expect.stringMatching(/^the database as busy as during the sample/),
    expect.stringMatching(/^Temporal holding each partition.s slot about \d+ ms besides its database work/),
    expect.stringMatching(/^the \d+ sampled rows typical of the \d+ in scope$/),
    'no pause, guard hold or live change of limits on the way',
  ]);
  expect(estimate.preview).toHaveLength(3);
  expect(estimate.preview[0]).toMatchObject({ change: 'update', changed: ['amount_usd'], current: { amount_usd: '-1.00' } });
  expect(estimate.preview[0].computed.amount_usd).not.toBe('-1.00');

  const text = await cli('plan', writeSpec(spec('approved-measure')));
  expect(text.stdout).toMatch(/sample: +[\d,]+ rows from id:\S+, id:\S+: 0 to insert, 3 to update, [\d,]+ unchanged/);
  expect(text.stdout).toMatch(/duration: +at least .* \(the writes are not measured/);
  expect(text.stdout).toMatch(/assumes: +\d+ partitions in flight .*; Temporal holding each partition/);
  expect(text.stdout).toMatch(/amount_usd: "-1\.00" → "[\d.]+"/);
});

test('a saved plan is refused after an edit of a helper the TypeScript transform imports', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-plan-module-'));
  writeFileSync(path.join(dir, 'rate.ts'), 'export const EUR = 1083200n;\n');
  writeFileSync(
    path.join(dir, 'transform.ts'),
    `import { EUR } from './rate';
    export default { columns: ['id', 'tenant', 'created_at', 'amount_usd'], reads: ['id', 'tenant', 'created_at', 'currency', 'amount_cents'],
      transform(rows: { id: string; tenant: number; created_at: string; currency: string | null; amount_cents: string | null }[]) {
        return rows.map((r) => ({ id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: r.currency === 'EUR' && r.amount_cents ? String(BigInt(r.amount_cents) * EUR / 100000000n) : null }));
      } };\n`,
  );
  const specFile = writeSpec(spec('approved-module', { transform: { name: 'eur', version: 1, module: path.join(dir, 'transform.ts') } }));
  const saved = planFile();
  const plan = await cli('plan', specFile, '--save', saved);
  expect(plan.code).toBe(0);
  expect(plan.stdout).toMatch(/bundled: rate\.ts, transform\.ts/);

  writeFileSync(path.join(dir, 'rate.ts'), 'export const EUR = 1090000n;\n');
  const started = await cli('start', specFile, '--plan', saved, '--approved-by', 'bob');
  expect(started.code).toBe(2);
  expect(started.stderr).toMatch(/the transform's code changed: [0-9a-f]{12} approved, [0-9a-f]{12} now \(bundled from rate\.ts, transform\.ts\)/);
  expect(await runsOf('approved-module')).toBe(0);
});

test('a reference table edited mid-run holds the run; resume needs the change accepted with a reason, and then the run completes', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const started = await env.start(
    spec('approved-hold', { partition: { by: 'range', column: 'id', size: 10_000 }, limits: { chunkSize: 1000, concurrency: 1, rowsPerSecond: 6000 } }),
  );
  const succeeded = async () =>
    Number((await env.db.pool.query("SELECT count(*) AS n FROM backfill.partitions WHERE run_id = $1 AND status = 'succeeded'", [started.runId])).rows[0].n);
  expect(await pollUntil(async () => ((await succeeded()) >= 1 ? true : undefined), { timeoutMs: 60_000, intervalMs: 50 })).toBe(true);
  // status carries the pace of the last minute over the rows still to read (the cap is 6,000 rows/s)
  const { eta } = await statusReportFor(env.db.pool, started.runId);
  expect(eta).toMatchObject({ seconds: expect.any(Number), plannedSeconds: null });
  expect(eta!.rowsPerSecond).toBeGreaterThan(1000);
  expect(eta!.rowsPerSecond).toBeLessThan(9000);
  await env.db.pool.query("UPDATE app.fx SET usd_rate = 1.2 WHERE currency = 'GBP'");

  // the next partition to start sees the change and the run pauses, saying why
  const paused = await pollUntil(async () => ((await getRun(env.db.pool, started.runId))!.paused ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
  expect(paused).toBe(true);
  const events = await listEvents(env.db.pool, started.runId);
  expect(events.find((e) => e.kind === 'paused')).toMatchObject({
    actor: 'backfill (input check)',
    reason: expect.stringMatching(/^input changed since the run started: table app\.fx has rows with other values\. Resume with --accept-input-change/),
  });
  const { rows: partitions } = await env.db.pool.query('SELECT count(*)::int AS total FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  const doneWhenHeld = await succeeded();
  expect(doneWhenHeld).toBeLessThan(partitions[0].total);

  const run = (await getRun(env.db.pool, started.runId))!;
  const operated = { client: env.client, pool: env.db.pool };
  await expect(controlRun(operated, run, 'resume', { actor: 'carol' })).rejects.toThrow(
    /cannot resume as it is: input changed since the run started: table app\.fx has rows with other values\. To go on with the changed input: backfill resume \S+ --accept-input-change --reason/,
  );
  await expect(controlRun(operated, run, 'resume', { actor: 'carol' }, undefined, { acceptInputChange: true })).rejects.toThrow(/needs --reason/);
  // still held: nothing more finished while the operator decided
  expect(await succeeded()).toBeLessThanOrEqual(doneWhenHeld + 1);

  expect(
    await controlRun(operated, run, 'resume', { actor: 'carol', reason: 'GBP rate corrected by finance' }, undefined, { acceptInputChange: true }),
  ).toEqual({ applied: true });
  const result = await waitForResult(started.handle);
  const accepted = (await listEvents(env.db.pool, started.runId, 50)).find((e) => e.kind === 'input-change-accepted');
  expect(accepted).toMatchObject({ actor: 'carol', reason: 'GBP rate corrected by finance', detail: { changes: ['table app.fx has rows with other values'] } });
  // the run completes; the partitions computed before the acceptance hold old-rate rows, and its final comparison says so
  expect(result.partitions.succeeded).toBe(partitions[0].total);
  expect(result.status).toBe('failed');
  const finished = (await listEvents(env.db.pool, started.runId, 50)).find((e) => e.kind === 'finished');
  expect((finished!.detail as { failedGates: { gate: string }[] }).failedGates.map((g) => g.gate)).toEqual(['compare']);

  // stale names exactly the partitions with a chunk committed before the acceptance
  const { rows: before } = await env.db.pool.query(
    `SELECT DISTINCT partition_id FROM backfill.chunks WHERE run_id = $1 AND committed_at < (SELECT at FROM backfill.run_events WHERE run_id = $1 AND kind = 'input-change-accepted') ORDER BY 1`,
    [started.runId],
  );
  expect(before.length).toBeGreaterThanOrEqual(1);
  const specFile = writeSpec(spec('approved-hold', { partition: { by: 'range', column: 'id', size: 10_000 } }));
  const stale = await cli('stale', specFile, '-o', 'json');
  expect(stale.code).toBe(0);
  const listed = JSON.parse(stale.stdout).stale as { partitionId: string; reason: string }[];
  expect(listed.map((p) => p.partitionId).sort()).toEqual(before.map((r) => r.partition_id));
  expect(listed[0].reason).toMatch(/^computed before the input change accepted at /);
  const status = await cli('status', started.runId, '--database', env.db.envVar);
  expect(status.stdout).toMatch(/inputs: +app\.fx \(checked before each partition/);
  expect(status.stdout).toMatch(new RegExp(`stale: +${before.length} partition\\(s\\) were computed before the accepted input change; .* --only-stale`));

  // --only-stale recomputes just those, with the accepted input: the target is exact, nothing is stale
  const rerun = await cli('start', specFile, '--only-stale', '--wait', '-o', 'json');
  expect(rerun.code).toBe(0);
  const { rows: rerunRow } = await env.db.pool.query(
    "SELECT run_id, partitions_total, only_stale FROM backfill.runs WHERE name = 'approved-hold' ORDER BY created_at DESC LIMIT 1",
  );
  expect(rerunRow[0]).toMatchObject({ partitions_total: before.length, only_stale: true });
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  expect(JSON.parse((await cli('stale', specFile, '-o', 'json')).stdout).stale).toEqual([]);
  await env.db.pool.query("UPDATE app.fx SET usd_rate = 1.265 WHERE currency = 'GBP'");
});

test('after a transform version bump, stale lists every partition written by the older version and --only-stale re-runs just those', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const v1 = writeSpec(spec('approved-version'));
  expect((await cli('start', v1, '--wait', '-o', 'json')).code).toBe(0);
  expect(JSON.parse((await cli('stale', v1, '-o', 'json')).stdout).stale).toEqual([]);
  expect(await cli('start', v1, '--only-stale')).toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/no partition of approved-version is stale; nothing to re-run/),
  });

  const v2 = writeSpec(spec('approved-version', { transform: { name: 'orders-usd', version: 2, sql: TRANSFORM_SQL.replace('round(', 'round(1 * ') } }));
  const text = await cli('stale', v2);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/2 partition\(s\) of approved-version are stale:/);
  expect(text.stdout).toMatch(/written by transform version 1, the spec is at 2/);
  expect(text.stdout).toMatch(/Re-run just these: backfill start .* --only-stale/);
  expect((await cli('start', v2, '--only-stale', '--wait', '-o', 'json')).code).toBe(0);
  expect(JSON.parse((await cli('stale', v2, '-o', 'json')).stdout).stale).toEqual([]);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
});

test('a function the SQL transform calls is an input: a new definition is refused like a changed table', async () => {
  await env.db.pool.query(
    `CREATE FUNCTION app.to_usd(cents bigint, rate numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$ SELECT round(cents * rate / 100.0, 2) $$`,
  );
  const specFile = writeSpec(
    spec('approved-function', {
      transform: {
        name: 'orders-usd-fn',
        version: 1,
        sql: 'SELECT c.id, c.tenant, c.created_at, app.to_usd(c.amount_cents, f.usd_rate) AS amount_usd FROM chunk c LEFT JOIN app.fx f USING (currency)',
      },
    }),
  );
  const saved = planFile();
  const plan = await cli('plan', specFile, '--save', saved);
  expect(plan.code).toBe(0);
  expect(plan.stdout).toMatch(/function app\.to_usd\(bigint,numeric\) \(definition [0-9a-f]{12}\)/);
  expect(plan.stdout).toMatch(/table app\.fx: 4 rows, content [0-9a-f]{12}/);

  await env.db.pool.query(
    `CREATE OR REPLACE FUNCTION app.to_usd(cents bigint, rate numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$ SELECT round(cents * rate / 100.0, 3) $$`,
  );
  const started = await cli('start', specFile, '--plan', saved, '--approved-by', 'dave');
  expect(started.code).toBe(2);
  expect(started.stderr).toMatch(/input function app\.to_usd\(bigint,numeric\) has a new definition/);
  expect(await runsOf('approved-function')).toBe(0);
});

test('plan raises what a reviewer would: row triggers and foreign keys on the target, a reference table read in full per chunk, replication, a bloated target', async () => {
  const pool = env.db.pool;
  await pool.query('TRUNCATE app.orders_usd');
  await pool.query(`
    CREATE TABLE app.tenant_names (tenant integer, name text);
    INSERT INTO app.tenant_names SELECT n % 12 + 1, 'tenant ' || n FROM generate_series(1, 60000) n;
    ANALYZE app.tenant_names;
    CREATE TABLE app.tenants (tenant integer PRIMARY KEY);
    INSERT INTO app.tenants SELECT generate_series(1, 12);
    ALTER TABLE app.orders_usd ADD CONSTRAINT orders_usd_tenant_fk FOREIGN KEY (tenant) REFERENCES app.tenants;
    CREATE FUNCTION app.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
    CREATE TRIGGER audit_usd BEFORE INSERT OR UPDATE ON app.orders_usd FOR EACH ROW EXECUTE FUNCTION app.touch();
    SELECT pg_create_physical_replication_slot('backfill_test_slot');
    -- autovacuum would clear the dead rows this test makes between the count and the plan (it did, on CI)
    ALTER TABLE app.orders_usd SET (autovacuum_enabled = false);`);
  await pool.query(`INSERT INTO app.orders_usd SELECT id, tenant, created_at, 0 FROM app.orders WHERE status <> 'void'`);
  await pool.query('DELETE FROM app.orders_usd');
  await pollUntil(
    async () => {
      await pool.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await pool.query("SELECT n_dead_tup AS n FROM pg_stat_all_tables WHERE relid = 'app.orders_usd'::regclass");
      return Number(rows[0].n) >= 20_000 ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
  try {
    const sql =
      'SELECT c.id, c.tenant, c.created_at, length(n.name)::numeric AS amount_usd FROM chunk c ' +
      'LEFT JOIN (SELECT DISTINCT ON (tenant) tenant, name FROM app.tenant_names ORDER BY tenant, name) n USING (tenant)';
    const plan = await cli('plan', writeSpec(spec('approved-review', { transform: { name: 'names', version: 1, sql } })), '-o', 'json');
    expect(plan.code).toBe(0);
    const warnings = JSON.parse(plan.stdout).warnings as string[];
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^target: app\.orders_usd has row trigger\(s\) audit_usd, which run for every row written/),
        expect.stringMatching(/^target: app\.orders_usd has foreign key\(s\) to app\.tenants: every row written is looked up there/),
        expect.stringMatching(/^transform: reads app\.tenant_names \(about 60,000 rows\) with a sequential scan for every chunk of 10000; index the column/),
        expect.stringMatching(
          /^database: 0 replica\(s\) stream from this server and 1 replication slot\(s\) hold WAL: .* add limits\.guards\.replicationLagSeconds/,
        ),
        expect.stringMatching(/^target: app\.orders_usd already holds about [\d,]+ dead rows \(\d+ %\): VACUUM it before the run/),
      ]),
    );
  } finally {
    await pool.query(`
      SELECT pg_drop_replication_slot('backfill_test_slot');
      DROP TRIGGER audit_usd ON app.orders_usd;
      ALTER TABLE app.orders_usd RESET (autovacuum_enabled);
      ALTER TABLE app.orders_usd DROP CONSTRAINT orders_usd_tenant_fk;
      DROP TABLE app.tenant_names, app.tenants;`);
    await pool.query('VACUUM app.orders_usd');
  }
});

test.each([
  ['range', { by: 'range', column: 'id', size: 60_000 }],
  ['time', { by: 'time', column: 'created_at', size: '7 days' }],
  ['list', { by: 'list', column: 'tenant' }],
])('plan output and JSON for %s partitions: scope, sample, projection and preview agree with the data', async (kind, partition) => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const inScope = Number((await env.db.pool.query("SELECT count(*) AS n FROM app.orders WHERE status <> 'void'")).rows[0].n);
  const specFile = writeSpec(spec(`approved-${kind}`, { partition: partition as SpecInput['partition'] }));
  const json = await cli('plan', specFile, '-o', 'json');
  expect(json.code).toBe(0);
  const shown = JSON.parse(json.stdout);
  expect(shown.partitions.length).toBeGreaterThan(1);
  expect(shown.estimate.scope).toMatchObject({ rows: inScope, exact: true });
  expect(shown.estimate.sample.partitions).toHaveLength(Math.min(3, shown.partitions.length));
  expect(shown.estimate.sample.rows).toBeGreaterThan(0);
  // an empty target: every sampled row would be inserted, and so would every row in scope
  expect(shown.estimate.sample.inserts).toBe(shown.estimate.sample.rows);
  expect(shown.estimate.projected).toMatchObject({ inserts: inScope, updates: 0, unchanged: 0 });
  expect(shown.estimate.preview[0]).toMatchObject({ change: 'insert', current: null });
  const text = await cli('plan', specFile);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain(`${shown.partitions.length} partitions:`);
  expect(text.stdout).toMatch(new RegExp(`scope: +${inScope.toLocaleString('en-US')} rows \\(counted\\)`));
  expect(text.stdout).toMatch(/duration: +at least .* at concurrency 4/);
});
