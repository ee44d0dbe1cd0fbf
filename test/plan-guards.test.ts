/**
 * `plan --measure-guards` against PostgreSQL: every guard of the spec read as a worker reads it,
 * thresholds the database passes before the run has written anything named as what they would
 * do (slow the run from its start, hold it), commitMs measured for a spec without it with
 * thresholds to add, and nothing written but the commitMs probe's own row in the ledger: no
 * ledger made where there is none, and no target row touched.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { migrateLedger } from '../src/ledger/migrate';
import { planSpec } from '../src/operations/plan-spec';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { runCli } from './helpers/cli';

let db: TestDatabase;
const dir = mkdtempSync(path.join(os.tmpdir(), 'plan-guards-'));

beforeAll(async () => {
  db = await createTestDatabase('planguards');
  await db.pool.query(`CREATE SCHEMA app;
    CREATE TABLE app.items (id bigint PRIMARY KEY, price integer NOT NULL);
    INSERT INTO app.items SELECT g, g % 100 FROM generate_series(1, 5000) g;
    CREATE TABLE app.items_out (id bigint PRIMARY KEY, price_x2 integer);
    INSERT INTO app.items_out SELECT id, price * 2 FROM app.items WHERE id <= 2500;
    CREATE TABLE app.signals (queue integer NOT NULL); INSERT INTO app.signals VALUES (40);
    ANALYZE app.items, app.items_out`);
});

afterAll(async () => {
  await db?.drop();
});

function specFile(name: string, limits: Record<string, unknown>): string {
  const file = path.join(dir, `${name}.yaml`);
  const spec = {
    name,
    reason: 'plan --measure-guards test',
    database: db.envVar,
    source: { table: 'app.items', key: 'id' },
    partition: { by: 'range', column: 'id', size: 2500 },
    transform: { name: 'x2', version: 1, sql: 'SELECT c.id, c.price * 2 AS price_x2 FROM chunk c' },
    target: { table: 'app.items_out', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 1000, concurrency: 1, ...limits },
  };
  writeFileSync(file, stringify(spec));
  return file;
}

const targetVersions = async () => (await db.pool.query<{ v: string }>("SELECT string_agg(xmin::text, ',' ORDER BY id) AS v FROM app.items_out")).rows[0].v;

test('before the ledger exists: the spec guards are read and judged, commitMs is left unmeasured with the command that makes it possible, and nothing is created', async () => {
  const before = await targetVersions();
  const p = await planSpec(
    specFile('noledger', {
      guards: {
        commitMs: { soft: 5, hard: 500 },
        custom: [
          { name: 'queue-soft', sql: 'SELECT queue FROM app.signals', soft: 10, hard: 1000 },
          { name: 'queue-hard', sql: 'SELECT queue FROM app.signals', soft: 5, hard: 20 },
          { name: 'queue-fine', sql: 'SELECT queue FROM app.signals', soft: 100 },
        ],
      },
    }),
    { measureGuards: true },
  );
  const g = p.guards!;
  expect(g.readings).toBe(30);
  expect(g.unmeasured).toEqual([{ guard: 'commitMs', why: expect.stringContaining(`backfill migrate --database ${db.envVar}`) }]);
  const byName = Object.fromEntries(g.guards.map((m) => [m.guard, m]));
  expect(Object.keys(byName).sort()).toEqual(['queue-fine', 'queue-hard', 'queue-soft']);
  expect(byName['queue-soft']).toMatchObject({ readings: 30, p50: 40, overSoft: 30, overHard: 0, writing: 0.13 });
  expect(byName['queue-hard']).toMatchObject({ overHard: 30 });
  expect(byName['queue-fine'].advice).toBeUndefined();
  expect(p.warnings).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^guards: queue-soft read over soft 10 in 30 of 30 readings .* about 13 % of the time/),
      expect.stringMatching(/^guards: queue-hard read over hard 20 in 30 of 30 readings .* the run would hold/),
    ]),
  );
  expect(g.suggestedCommitMs).toBeUndefined();
  expect((await db.pool.query("SELECT to_regnamespace('backfill') AS s")).rows[0].s).toBeNull();
  expect(await targetVersions()).toBe(before);
}, 60_000);

test('with the ledger: commitMs is timed as the workers time it; a soft threshold under it is named, and a spec without it gets thresholds to add', async () => {
  await migrateLedger(db.pool);
  const before = await targetVersions();
  const runsBefore = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM backfill.runs')).rows[0].n;

  const low = await planSpec(specFile('lowsoft', { guards: { commitMs: { soft: 0.001, hard: 10_000 } } }), { measureGuards: true });
  const commit = low.guards!.guards.find((m) => m.guard === 'commitMs')!;
  expect(commit).toMatchObject({ readings: 30, overSoft: 30, overHard: 0, soft: 0.001 });
  expect(commit.p50).toBeGreaterThan(0);
  expect(low.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^guards: commitMs read over soft 0.001 in 30 of 30 readings/)]));
  expect(low.guards!.suggestedCommitMs).toBeUndefined();

  const none = await planSpec(specFile('noguards', { concurrency: 2 }), { measureGuards: true });
  const quiet = none.guards!.guards.find((m) => m.guard === 'commitMs')!;
  expect(quiet).toMatchObject({ readings: 30, overSoft: 0 });
  expect(none.guards!.suggestedCommitMs).toEqual({ soft: Math.max(0.1, quiet.p95), hard: expect.any(Number) });
  expect(none.warnings.filter((w) => w.startsWith('guards:'))).toEqual([]);

  // the probe's row, one per session that probed, is all it wrote
  expect(await targetVersions()).toBe(before);
  expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM backfill.runs')).rows[0].n).toBe(runsBefore);
  expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM backfill.commit_probes')).rows[0].n).toBeGreaterThan(0);
}, 60_000);

test('the CLI shows the readings, the verdicts and the thresholds to add', async () => {
  const shown = await runCli([
    'plan',
    specFile('cli', { guards: { custom: [{ name: 'queue', sql: 'SELECT queue FROM app.signals', soft: 10 }] } }),
    '--measure-guards',
  ]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(
    /^Guards \(30 readings over [\d.]+ s, from where plan runs, as a worker reads them before each chunk: run it where the workers run\):$/m,
  );
  expect(shown.stdout).toMatch(
    /^ {2}queue: median 40, p90 40, p95 40, max 40; soft 10; over soft in 30 of 30: partitions would write about 13 % of the time$/m,
  );
  expect(shown.stdout).toMatch(/^ {2}commitMs: median [\d.]+, p90 [\d.]+, p95 [\d.]+, max [\d.]+; not in the spec$/m);
  expect(shown.stdout).toMatch(/^ {4}limits: \{ guards: \{ commitMs: \{ soft: [\d.]+, hard: [\d.]+ \} \} \}$/m);
  expect(shown.stdout).toMatch(/^warning: guards: queue read over soft 10 in 30 of 30 readings/m);
}, 60_000);
