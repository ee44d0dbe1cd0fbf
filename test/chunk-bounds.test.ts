/**
 * Where each chunk ends, against PostgreSQL itself: walking a partition chunk by chunk with the
 * compiled statements visits every row once, in the walk's order, each chunk `chunkSize` rows
 * but the last — a partition of an exact multiple of chunks, a short one, an empty one; a
 * bigint key, a uuid key (no max()), a composite key with text in "C" beside a partition column;
 * each with the statement shaped for a partition's last chunk too.
 */
import { compileRun } from '../src/compiler/statements';
import type { RunShape } from '../src/compiler/shape';
import type { Spec } from '../src/specs/schema';
import { resolveSpec, type ResolvedSpec } from '../src/specs/resolve';
import type { PartitionBounds } from '../src/domain/types';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('chunkends');
  await db.pool.query(`
    CREATE TABLE public.walked (id bigint NOT NULL, u uuid NOT NULL, code text COLLATE "C" NOT NULL, grp integer NOT NULL,
                                UNIQUE (id), UNIQUE (u), UNIQUE (code, id));
    -- 25 rows in group 1 (5 chunks of 5 exactly), 23 in group 2 (4 of 5 and one of 3), none in group 3;
    -- codes repeat, so (code, id) chunk ends fall inside a run of equal codes
    INSERT INTO public.walked
      SELECT g, md5(g::text)::uuid, 'c' || (g % 4), CASE WHEN g <= 25 THEN 1 ELSE 2 END FROM generate_series(1, 48) g;`);
});

afterAll(async () => {
  await db?.drop();
});

function specFor(key: string | string[]): ResolvedSpec {
  return resolveSpec({
    name: 'walk',
    reason: 'test',
    database: 'DATABASE_URL',
    source: { table: 'public.walked', key },
    partition: { by: 'list', column: 'grp', values: [1, 2, 3] },
    transform: { name: 't', version: 1, sql: 'SELECT c.id FROM chunk c' },
    target: { table: 'public.walked', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 5, concurrency: 1 },
  } as Spec);
}

const cases: [string, string | string[], RunShape, string][] = [
  ['a bigint key', 'id', { keyType: 'bigint', partitionColumnType: 'integer', outputColumns: ['id'] }, 'id::text'],
  ['a uuid key', 'u', { keyType: 'uuid', partitionColumnType: 'integer', outputColumns: ['id'] }, 'u::text'],
  [
    'a composite key with text in "C"',
    ['code', 'id'],
    { keyType: 'text', keyTypes: ['text', 'bigint'], partitionColumnType: 'integer', outputColumns: ['id'] },
    'json_build_array(code::text, id::text)::text',
  ],
];

// the statement shaped for a chunk expected to be the last must answer what the common one does
const shapes = cases.flatMap(([label, ...rest]) =>
  [false, true].map((likelyLast) => [`${label}${likelyLast ? ', each chunk expected to be the last' : ''}`, ...rest, likelyLast] as const),
);

test.each(shapes)('%s: every row once, in order, full chunks but the last', async (_label, key, shape, cursorSql, likelyLast) => {
  const spec = specFor(key);
  const compiled = compileRun(spec, shape);
  const order = Array.isArray(key) ? key.join(', ') : key;
  for (const [group, expectedSizes] of [
    [1, [5, 5, 5, 5, 5]],
    [2, [5, 5, 5, 5, 3]],
    [3, []],
  ] as [number, number[]][]) {
    const bounds: PartitionBounds = { kind: 'list', column: 'grp', value: String(group) };
    const { rows: all } = await db.pool.query<{ c: string }>(`SELECT ${cursorSql} AS c FROM public.walked WHERE grp = $1 ORDER BY ${order}`, [group]);
    const sizes: number[] = [];
    const ends: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const q = compiled.chunkBounds(bounds, cursor, spec.limits.chunkSize, likelyLast);
      const { n, hi } = (await db.pool.query<{ n: number; hi: string | null }>(q.text, q.values)).rows[0];
      if (n === 0) {
        expect(hi).toBeNull();
        break;
      }
      sizes.push(n);
      ends.push(hi!);
      cursor = hi;
    }
    expect({ group, sizes }).toEqual({ group, sizes: expectedSizes });
    // each chunk ends on the row the walk's order puts n rows after the previous end
    const expectedEnds = expectedSizes.map((_, i) => all[expectedSizes.slice(0, i + 1).reduce((a, b) => a + b, 0) - 1].c);
    expect(ends).toEqual(expectedEnds);
  }
});
