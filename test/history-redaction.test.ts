/**
 * Row data stays out of Temporal. A run whose chunks hit a CHECK violation, a unique
 * violation, a bad cast and a throwing TypeScript transform fails those partitions; every
 * history of the run (the run workflow and each partition child, every continue-as-new
 * run) is scanned for the rows' values and for list values, and none is found. The full
 * errors, values included, are in the ledger, where `status` reads them. Before-images and a
 * revert's conflicts (docs/undo.md) stay in the ledger too.
 */
import { statusReportFor, waitForResult } from '../src/operations';
import { partitionWorkflowId, runWorkflowId } from '../src/domain/ids';
import { getRun } from '../src/ledger/runs';
import { revertRun } from '../src/undo/revert-run';
import { useTestEnvironment } from './helpers/environment';
import { historiesText } from './helpers/histories';
import { writeModule } from './helpers/orders';

const env = useTestEnvironment('redact', { rows: 10 });

/** A value no message may carry: each row's is unique, and the same prefix marks them all. */
const SECRET = 'SSN-123-45-';

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE app.people (id bigint PRIMARY KEY, n integer NOT NULL, ssn text NOT NULL, code text NOT NULL, team text NOT NULL);
    INSERT INTO app.people
    SELECT i, i, '${SECRET}' || i, CASE WHEN i = 600 THEN '${SECRET}' || i ELSE i::text END, 'team-' || (i / 250)
      FROM generate_series(1, 1100) AS i;
    CREATE TABLE app.people_out (id bigint PRIMARY KEY, n integer CHECK (n < 900), ssn text UNIQUE, code integer);
    -- takes the ssn that row 300 will want: a unique violation whose detail names the value
    INSERT INTO app.people_out VALUES (-300, 0, '${SECRET}300', 0);
  `);
});

function peopleSpec(name: string, partition: unknown, transform: unknown) {
  return {
    name,
    reason: 'test: row data stays out of Temporal',
    database: env.db.envVar,
    source: { table: 'app.people', key: 'id' },
    partition,
    transform,
    target: { table: 'app.people_out', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 100, concurrency: 5 },
  };
}

/** Runs a spec that must end failed; returns its failed partitions and the ids of every workflow it ran. */
async function runToFailure(spec: ReturnType<typeof peopleSpec>) {
  const started = await env.start(spec);
  expect((await waitForResult(started.handle)).status).toBe('failed');
  const { rows } = await env.db.pool.query<{ partition_id: string; last_error: string; error_detail: string }>(
    "SELECT partition_id, last_error, error_detail FROM backfill.partitions WHERE run_id = $1 AND status = 'failed' ORDER BY ordinal",
    [started.runId],
  );
  const { rows: all } = await env.db.pool.query<{ partition_id: string }>('SELECT partition_id FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  const workflowIds = [started.workflowId, ...all.map((r) => partitionWorkflowId(spec.name, started.runId, r.partition_id))];
  return { started, rows, workflowIds };
}

test('a run that hits constraint errors puts no row value into any history; the ledger keeps the full errors', async () => {
  const { started, rows, workflowIds } = await runToFailure(
    peopleSpec(
      'redact-sql',
      { by: 'range', column: 'id', size: 250 },
      { name: 'people', version: 1, sql: 'SELECT c.id, c.n, c.ssn, c.code::integer AS code FROM chunk c' },
    ),
  );
  // 250..499: unique (ssn 300), 500..749: cast (code of 600), 750..999 and 1000..1249: CHECK (n >= 900)
  expect(rows.map((r) => r.partition_id)).toEqual(['id:000000250-000000500', 'id:000000500-000000750', 'id:000000750-000001000', 'id:000001000-000001250']);
  expect(rows[0].last_error).toMatch(
    /^partition id:000000250-000000500 failed at id in \[250, \d+\]: duplicate key value violates unique constraint "people_out_ssn_key" \(SQLSTATE 23505; table app\.people_out\); the full error is in the ledger: backfill status /,
  );
  expect(rows[0].error_detail).toContain(`Key (ssn)=(${SECRET}300) already exists`);
  expect(rows[1].last_error).toContain('invalid input syntax for type integer: "…" (SQLSTATE 22P02)');
  expect(rows[1].error_detail).toContain(`"${SECRET}600"`);
  expect(rows[1].last_error).toMatch(/failed at id in \(\d+, \d+\]: /);
  expect(rows[2].last_error).toMatch(
    /failed at id in \(\d+, \d+\]: new row for relation "people_out" violates check constraint "people_out_n_check" \(SQLSTATE 23514; table app\.people_out\)/,
  );
  expect(rows[2].error_detail).toContain(`Failing row contains (900, 900, ${SECRET}900, 900)`);
  // a first chunk names the partition's own lower bound (once: "id in (-inf, 1099]")
  expect(rows[3].last_error).toMatch(/failed at id in \[1000, 1099\]: new row for relation/);

  const status = await statusReportFor(env.db.pool, started.runId);
  expect(status.failures.map((f) => f.error).join('\n')).toContain(`${SECRET}900`);

  const text = await historiesText(env.client, workflowIds);
  // the scan sees failures and decoded payloads (the spec is the run's input)
  expect(text).toContain('people_out_n_check');
  expect(text).toContain('c.code::integer AS code');
  expect(text).not.toContain(SECRET);
});

test('a throwing TypeScript transform, a bad value it returns and list partitions leave neither row values nor list values in any history', async () => {
  const modulePath = writeModule(
    'leaky',
    `export default {
      columns: ['id', 'n', 'ssn', 'code'],
      reads: ['id', 'n', 'ssn', 'code'],
      transform(rows: { id: string; n: number; ssn: string; code: string }[]) {
        for (const r of rows) if (r.n === 420) throw new Error('cannot handle ' + r.ssn);
        // row 600's code is its ssn: the output table (filled by COPY) refuses it for an integer column
        return rows.map((r) => ({ id: r.id, n: r.n % 900, ssn: r.ssn + '-x', code: r.n === 600 ? r.ssn : r.n }));
      },
    };\n`,
  );
  const { rows, workflowIds } = await runToFailure(
    peopleSpec('redact-ts', { by: 'list', column: 'team' }, { name: 'people-ts', version: 1, module: modulePath }),
  );
  expect(rows).toHaveLength(2);
  expect(rows[0].last_error).toContain('transform people-ts@1 threw Error;');
  expect(rows[0].error_detail).toContain(`cannot handle ${SECRET}420`);
  expect(rows[1].last_error).toMatch(/^partition team#000003 failed at id in .*: invalid input syntax for type integer: "…" \(SQLSTATE 22P02\)/);
  expect(rows[1].error_detail).toContain(`"${SECRET}600"`);

  const text = await historiesText(env.client, workflowIds);
  expect(text).toContain('threw Error');
  expect(text).toContain('"partitionId":"team#000002"');
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/team-\d/);
});

test('before-images and a revert with conflicts put neither the old values nor the conflicting rows into any history', async () => {
  const OLD = 'OLD-VALUE-77-';
  await env.db.pool.query(`
    CREATE TABLE app.people_v (id bigint PRIMARY KEY, ssn text NOT NULL);
    INSERT INTO app.people_v SELECT i, '${OLD}' || i FROM generate_series(1, 400) AS i;
  `);
  const spec = {
    name: 'redact-undo',
    reason: 'test: images stay in the ledger',
    database: env.db.envVar,
    source: { table: 'app.people', key: 'id', where: 'id <= 500' },
    partition: { by: 'range', column: 'id', size: 100 },
    transform: { name: 'people-v', version: 1, sql: 'SELECT c.id, c.ssn FROM chunk c' },
    target: { table: 'app.people_v', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 50, concurrency: 3 },
  };
  const started = await env.start(spec);
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  // the application changes some rows the run wrote: the revert leaves them, as conflicts
  await env.db.pool.query(`UPDATE app.people_v SET ssn = ssn || '-app' WHERE id IN (7, 170, 450)`);
  const original = (await getRun(env.db.pool, started.runId))!;
  const revert = await revertRun({ client: env.client, pool: env.db.pool, taskQueue: env.worker.taskQueue }, original, { reason: 'undo', actor: 'test' });
  expect((await waitForResult(revert.handle)).status).toBe('succeeded');
  expect((await statusReportFor(env.db.pool, revert.runId)).revert!.conflicts.total).toBe(3);
  // the images did their job: the old values are back, in the target
  expect((await env.db.pool.query(`SELECT count(*)::int AS n FROM app.people_v WHERE ssn LIKE '${OLD}%'`)).rows[0].n).toBe(400 - 2);

  const ids = async (runId: string, name: string) => {
    const { rows } = await env.db.pool.query<{ partition_id: string }>('SELECT partition_id FROM backfill.partitions WHERE run_id = $1', [runId]);
    return [runWorkflowId(name, runId), ...rows.map((r) => partitionWorkflowId(name, runId, r.partition_id))];
  };
  const text = await historiesText(env.client, [...(await ids(started.runId, spec.name)), ...(await ids(revert.runId, revert.name))]);
  expect(text).toContain('registerRevert');
  expect(text).not.toContain(OLD);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('-app');
});
