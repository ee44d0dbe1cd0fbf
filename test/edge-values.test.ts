/**
 * Edge values that once planned wrong, crashed or looped: 'infinity' timestamps, range
 * partitions reaching past the key type, integers beyond what a JavaScript number holds,
 * NULL keys under a unique index, and list values spelled two ways. Each now plans right
 * and runs exact, or is refused at plan time with the field and the fix.
 */
import { checkSpec, waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { writeSpec } from './helpers/orders';

const env = useTestEnvironment('edges', { rows: 10 });

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE app.big (id bigint PRIMARY KEY, grp bigint NOT NULL, v integer NOT NULL, at timestamptz);
    INSERT INTO app.big
    SELECT id, CASE WHEN id % 2 = 0 THEN 9007199254740993 ELSE 9007199254740992 END, (id % 1000)::int, now()
      FROM (SELECT 9223372036854775807 - g AS id FROM generate_series(0, 2499) g
            UNION ALL SELECT -9223372036854775808 + g FROM generate_series(0, 2499) g) ids;
    CREATE TABLE app.big_out (id bigint PRIMARY KEY, v integer);
    CREATE TABLE app.nullable (id integer UNIQUE, v integer NOT NULL);
    INSERT INTO app.nullable SELECT g, g FROM generate_series(1, 100) g;
    INSERT INTO app.nullable VALUES (NULL, 0), (NULL, 1);
    CREATE TABLE app.nullable_out (id integer PRIMARY KEY, v integer);
  `);
});

function bigSpec(overrides: Record<string, unknown>) {
  return {
    name: 'edges',
    reason: 'test: edge values',
    database: env.db.envVar,
    source: { table: 'app.big', key: 'id' },
    partition: { by: 'range', column: 'id', size: 1_000_000 },
    transform: { name: 'copy', version: 1, sql: 'SELECT c.id, c.v FROM chunk c' },
    target: { table: 'app.big_out', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 700, concurrency: 4 },
    ...overrides,
  };
}

async function targetMatches(where = 'true'): Promise<{ missing: number; extra: number }> {
  const { rows } = await env.db.pool.query(`
    SELECT (SELECT count(*) FROM (SELECT id, v FROM app.big WHERE ${where} EXCEPT SELECT id, v FROM app.big_out) x)::int AS missing,
           (SELECT count(*) FROM (SELECT id, v FROM app.big_out EXCEPT SELECT id, v FROM app.big WHERE ${where}) x)::int AS extra`);
  return rows[0];
}

test.each([
  ['the top', 'id > 0', ['9223372036854000000', '9223372036855000000']],
  ['the bottom', 'id < 0', ['-9223372036855000000', '-9223372036854000000']],
])('range partitions at %s of bigint run exact (the edge partition reaches past the type)', async (end, where, bounds) => {
  await env.db.pool.query('TRUNCATE app.big_out');
  const spec = bigSpec({ name: `edges-range-${end === 'the top' ? 'top' : 'bottom'}`, source: { table: 'app.big', key: 'id', where } });
  const checked = await checkSpec(writeSpec(spec));
  expect(checked.partitions.map((p) => (p.bounds.kind === 'range' ? [p.bounds.lo, p.bounds.hi] : []))).toEqual([bounds]);
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await targetMatches(where)).toEqual({ missing: 0, extra: 0 });
});

test('a listed integer beyond 2^53 selects exactly its rows, not its rounded neighbour', async () => {
  await env.db.pool.query('TRUNCATE app.big_out');
  const yaml = writeSpec(
    `name: edges-list\nreason: test\ndatabase: ${env.db.envVar}\nsource: { table: app.big, key: id }\n` +
      'partition: { by: list, column: grp, values: [9007199254740993] }\n' +
      "transform: { name: copy, version: 1, sql: 'SELECT c.id, c.v FROM chunk c' }\n" +
      'target: { table: app.big_out, key: [id], mode: upsert }\n',
  );
  const checked = await checkSpec(yaml);
  expect(checked.partitions.map((p) => p.bounds)).toEqual([{ kind: 'list', column: 'grp', value: '9007199254740993' }]);
  const started = await env.start(checked.loaded.spec);
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  expect(await targetMatches('grp = 9007199254740993')).toEqual({ missing: 0, extra: 0 });
});

test.each([
  [
    'one integer spelled two ways',
    ['1', '01'],
    'partition.values.1 is "01", the same bigint as "1": both would plan a partition over the same rows; list each value once',
  ],
  [
    'a value the column type cannot hold',
    ['1', 'x'],
    'partition.values.1 is "x", which is not a valid bigint (invalid input syntax for type bigint: "x"); list values of grp\'s type',
  ],
])('%s is refused at plan time', async (_label, values, message) => {
  const file = writeSpec(bigSpec({ partition: { by: 'list', column: 'grp', values } }));
  await expect(checkSpec(file)).rejects.toThrow(`invalid spec ${file}: ${message}`);
});

test("'infinity' in a time partition column is refused with the way out, and the way out works", async () => {
  await env.db.pool.query("UPDATE app.big SET at = 'infinity' WHERE id = 9223372036854775807");
  const file = writeSpec(bigSpec({ partition: { by: 'time', column: 'at', size: '1 day' } }));
  await expect(checkSpec(file)).rejects.toThrow(
    `invalid spec ${file}: partition.column at holds 'infinity' or '-infinity' in scope, which no time partition can hold; exclude them with source.where (isfinite(at)), or partition by another column`,
  );
  const checked = await checkSpec(
    writeSpec(bigSpec({ source: { table: 'app.big', key: 'id', where: 'isfinite(at)' }, partition: { by: 'time', column: 'at', size: '1 day' } })),
  );
  expect(checked.partitions.length).toBeGreaterThan(0);
});

test('NULL keys under a unique index are refused (a keyset cursor never passes them); filtered out, the run is exact', async () => {
  const spec = {
    ...bigSpec({}),
    name: 'edges-nullable',
    source: { table: 'app.nullable', key: 'id' },
    partition: { by: 'range', column: 'v', size: 50 },
    target: { table: 'app.nullable_out', key: ['id'], mode: 'upsert' },
  };
  const file = writeSpec(spec);
  await expect(checkSpec(file)).rejects.toThrow(
    `invalid spec ${file}: source.key id is NULL in some rows in scope, and keyset chunks cannot walk NULL keys (those rows would never be read); exclude them with source.where (id IS NOT NULL), or give them keys and add NOT NULL`,
  );
  const started = await env.start({ ...spec, source: { ...spec.source, where: 'id IS NOT NULL' } });
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  const { rows } = await env.db.pool.query('SELECT count(*)::int AS n FROM app.nullable_out');
  expect(rows[0].n).toBe(100);
});
