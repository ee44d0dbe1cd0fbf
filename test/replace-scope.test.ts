/**
 * Replace mode deletes and rewrites exactly its partition's rows of the target. A rollup
 * whose partitions do not match the target's grain once ended `succeeded` with every day
 * holding one partition's share: now such a spec is refused at plan time where the types
 * show it (6-hour partitions into a date column), and a chunk whose output strays outside
 * its partition writes nothing and fails the partition, saying how to partition instead.
 */
import { checkSpec, waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { writeModule, writeSpec } from './helpers/orders';

const env = useTestEnvironment('replacescope', { rows: 50_000 });

const TRUE_DAILY = `SELECT created_at::date AS day, count(*) AS n FROM app.orders WHERE status <> 'void' GROUP BY 1`;

beforeAll(async () => {
  await env.db.pool.query('CREATE TABLE app.daily (day date PRIMARY KEY, n bigint NOT NULL)');
});

/** Days app.daily holds that `expected` (a rollup query) does not, and the other way round. */
async function dailyAgainst(expected: string): Promise<{ extra: number; missing: number }> {
  const { rows } = await env.db.pool.query(`
    SELECT (SELECT count(*) FROM (SELECT day, n FROM app.daily EXCEPT SELECT * FROM (${expected}) t) x)::int AS extra,
           (SELECT count(*) FROM (SELECT * FROM (${expected}) t EXCEPT SELECT day, n FROM app.daily) x)::int AS missing`);
  return rows[0];
}

function rollup(size: string, dayExpression: string) {
  return {
    name: 'daily-rollup',
    reason: 'test: a daily rollup in replace mode',
    database: env.db.envVar,
    source: { table: 'app.orders', key: 'id', where: "status <> 'void'" },
    partition: { by: 'time', column: 'created_at', size },
    transform: { name: 'daily', version: 1, sql: `SELECT ${dayExpression} AS day, count(*) AS n FROM chunk c GROUP BY 1` },
    target: { table: 'app.daily', key: ['day'], mode: 'replace', partitionColumn: 'day' },
    limits: { chunkSize: 5000, concurrency: 4 },
  };
}

test('6-hour partitions feeding a date column are refused before anything runs', async () => {
  const file = writeSpec(rollup('6 hours', 'c.created_at::date'));
  await expect(checkSpec(file)).rejects.toThrow(
    `invalid spec ${file}: partition.size is 6 hours, but target.partitionColumn day is a date: in replace mode each partition must cover whole days; use size: "1 day" (or weeks, months)`,
  );
});

test('days computed in another time zone stray outside their UTC partitions: nothing is written, the partitions fail with the fix', async () => {
  await env.db.pool.query('INSERT INTO app.daily SELECT day, -1 FROM (' + TRUE_DAILY + ') d');
  const started = await env.start(rollup('1 day', "(c.created_at AT TIME ZONE 'America/New_York')::date"));
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  const { rows } = await env.db.pool.query<{ last_error: string; error_detail: string }>(
    "SELECT last_error, error_detail FROM backfill.partitions WHERE run_id = $1 AND status = 'failed' ORDER BY ordinal",
    [started.runId],
  );
  expect(rows.length).toBeGreaterThan(0);
  expect(rows[0].last_error).toMatch(
    /^partition day:\d{4}-\d\d-\d\d failed at .*: the transform produced \d+ row\(s\) whose day lies outside partition day:\d{4}-\d\d-\d\d; replace mode may only write rows of the partition that computed them: partition at the grain of the target \(for a daily rollup, time partitions of "1 day", with partition.timeZone set to the zone the days are computed in; UTC by default\); the full error is in the ledger/,
  );
  expect(rows[0].error_detail).toMatch(/the partition holds day >= .* and < .*; for example day = \d{4}-\d\d-\d\d \(key \d{4}-\d\d-\d\d\)/);
  // no partition overwrote a day it does not own: every day still holds the sentinel or its true UTC count
  const { rows: wrong } = await env.db.pool.query(`SELECT count(*)::int AS n FROM app.daily d JOIN (${TRUE_DAILY}) t USING (day) WHERE d.n NOT IN (-1, t.n)`);
  expect(wrong[0].n).toBe(0);
});

test('a daily rollup over day partitions in UTC replaces every day exactly', async () => {
  const started = await env.start({ ...rollup('1 day', 'c.created_at::date'), name: 'daily-rollup-utc' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await dailyAgainst(TRUE_DAILY)).toEqual({ extra: 0, missing: 0 });
});

test('a daily rollup in New York days, over the DST switch, with partition.timeZone: every day replaced exactly, 23-hour day included', async () => {
  await env.db.pool.query('TRUNCATE app.daily');
  const NY_DAILY = `SELECT (created_at AT TIME ZONE 'America/New_York')::date AS day, count(*) AS n FROM app.orders WHERE status <> 'void' GROUP BY 1`;
  const spec = rollup('1 day', "(c.created_at AT TIME ZONE 'America/New_York')::date");
  const started = await env.start({ ...spec, name: 'daily-rollup-ny', partition: { ...spec.partition, timeZone: 'America/New_York' } });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await dailyAgainst(NY_DAILY)).toEqual({ extra: 0, missing: 0 });
  // the fixture spans 2024-03-10, when New York's day had 23 hours: its partition did too
  const { rows: dst } = await env.db.pool.query<{ hours: number }>(
    `SELECT extract(epoch FROM (bounds->>'hi')::timestamptz - (bounds->>'lo')::timestamptz) / 3600 AS hours
       FROM backfill.partitions WHERE run_id = $1 AND partition_id = 'day:2024-03-10'`,
    [started.runId],
  );
  expect(Number(dst[0].hours)).toBe(23);
});

test('a daily rollup computed by a TypeScript module sees each day whole, though a day holds more rows than a slice', async () => {
  await env.db.pool.query('TRUNCATE app.daily');
  const module = writeModule(
    'daily-count',
    `export default {
      columns: ['day', 'n'],
      reads: ['created_at'],
      version: 1,
      transform(rows: { created_at: string }[]) {
        const days = new Map<string, number>();
        // sessions run in UTC: the text starts with the UTC day
        for (const r of rows) days.set(r.created_at.slice(0, 10), (days.get(r.created_at.slice(0, 10)) ?? 0) + 1);
        return [...days].map(([day, n]) => ({ day, n }));
      },
    };\n`,
  );
  const spec = rollup('1 day', 'c.created_at::date');
  const started = await env.start({ ...spec, name: 'daily-rollup-module', transform: { name: 'daily', version: 1, module } });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await dailyAgainst(TRUE_DAILY)).toEqual({ extra: 0, missing: 0 });
  // upsert and update modes hand a transform 4,096 rows at a time (src/transforms/slices.ts): the largest days hold more
  const { rows: largest } = await env.db.pool.query(`SELECT max(n)::int AS n FROM (${TRUE_DAILY}) t`);
  expect(largest[0].n).toBeGreaterThan(4096);
});
