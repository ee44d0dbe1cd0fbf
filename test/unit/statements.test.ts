import { compileRun as compileResolved } from '../../src/compiler/statements';
import { boundsText } from '../../src/compiler/partition-predicate';
import type { Spec } from '../../src/specs/schema';
import { resolveSpec } from '../../src/specs/resolve';
import type { RunShape } from '../../src/compiler/shape';

/** Specs as written here, resolved as every caller of the compiler resolves them. */
const compileRun = (written: Spec, shape: RunShape) => compileResolved(resolveSpec(written), shape);

const spec: Spec = {
  name: 'orders',
  reason: 'r',
  database: 'DATABASE_URL',
  source: { table: 'public.orders', key: 'id', where: "status <> 'test'" },
  partition: { by: 'time', column: 'created_at', size: '1 day' },
  transform: { name: 't', version: 1, sql: 'SELECT c.id, c.total AS amount FROM chunk c;\n' },
  target: { table: 'public.totals', key: ['id'], mode: 'upsert' },
  limits: { chunkSize: 100, concurrency: 2 },
};
const shape = { keyType: 'bigint', partitionColumnType: 'timestamp with time zone', outputColumns: ['id', 'amount'] };
const day = { kind: 'time' as const, column: 'created_at', lo: '2024-01-01T00:00:00.000Z', hi: '2024-01-02T00:00:00.000Z' };

describe('compileRun', () => {
  const compiled = compileRun(spec, shape);

  test('a chunk is the keyset range (cursor, hi] inside the partition and the where filter', () => {
    const fill = compiled.fillFromSql(day, '10', '20');
    expect(fill.text).toBe(
      'WITH chunk AS (SELECT s.* FROM "public"."orders" s WHERE s."created_at" >= $1::timestamptz AND s."created_at" < $2::timestamptz ' +
        `AND s."id" > $3::bigint AND s."id" <= $4::bigint AND (status <> 'test'\n)) ` +
        `INSERT INTO ${compiled.outputTable} ("id", "amount") SELECT t."id", t."amount" FROM (SELECT c.id, c.total AS amount FROM chunk c\n) t`,
    );
    expect(fill.values).toEqual([day.lo, day.hi, '10', '20']);
  });

  test("a chunk's fill answers the output's count and key range in the same statement, from the rows it inserted", () => {
    const ranged = compileRun(spec, { ...shape, targetKeyType: 'bigint' });
    const fill = ranged.fillChunkFromSql(day, '10', '20');
    expect(fill.text).toBe(
      `${ranged.fillFromSql(day, '10', '20').text.replace(') INSERT INTO', '), filled AS (INSERT INTO')} RETURNING "id" AS k) ` +
        'SELECT count(*)::integer AS n, min(k)::text AS lo, max(k)::text AS hi FROM filled',
    );
    expect(fill.values).toEqual(ranged.fillFromSql(day, '10', '20').values);
    // a key whose min() and max() do not follow its index: the count alone, as outputKeyRange is null
    const uuids = compileRun(spec, { ...shape, keyType: 'uuid', targetKeyType: 'uuid' });
    expect(uuids.outputKeyRange).toBeNull();
    expect(uuids.fillChunkFromSql(day, null, null).text).toMatch(/RETURNING "id" AS k\) SELECT count\(\*\)::integer AS n FROM filled$/);
  });

  test('a partition split while running holds only its stretch of keys: (after, through] beside the cursor, in every statement', () => {
    const upper = { ...day, stretch: { after: '40', through: null } };
    const lower = { ...day, stretch: { after: null, through: '40' } };
    expect(compiled.fillFromSql(upper, null, '60').text).toContain(
      's."created_at" < $2::timestamptz AND s."id" > $3::bigint AND s."id" <= $4::bigint AND (status',
    );
    expect(compiled.fillFromSql(upper, null, '60').values).toEqual([day.lo, day.hi, '40', '60']);
    expect(compiled.chunkBounds(lower, '10', 100).text).toContain('s."id" <= $3::bigint AND s."id" > $4::bigint');
    expect(compiled.chunkBounds(lower, '10', 100).values).toEqual([day.lo, day.hi, '40', '10', 100]);
    expect(compiled.compareFromSql(upper, null, null, ['bigint', 'numeric']).text).toContain('s."id" > $3::bigint');
    expect(compiled.invariant('SELECT 1 FROM source_rows', lower, 5).text).toContain('s."id" <= $3::bigint');
    expect(compiled.describeRange(upper, null, '60')).toBe('id in (40, 60]');
    // the keys it was cut at are row data: described, never shown
    expect(boundsText(lower)).toBe(
      'created_at >= 2024-01-01T00:00:00.000Z and < 2024-01-02T00:00:00.000Z: its rows up to the key where it was cut while running (limits.splitTail; keys in the ledger)',
    );
    expect(boundsText(upper)).toContain('its rows after the key where it was cut while running');
    expect(boundsText({ ...day, stretch: { after: '40', through: '50' } })).toContain('its rows between the keys where it was cut');
    expect(compiled.rowsLeft(upper, '50', 1000)).toEqual({
      text:
        'SELECT count(*)::integer AS n FROM (SELECT FROM "public"."orders" s WHERE s."created_at" >= $1::timestamptz AND s."created_at" < $2::timestamptz ' +
        `AND s."id" > $3::bigint AND s."id" > $4::bigint AND (status <> 'test'\n) LIMIT $5::integer) r`,
      values: [day.lo, day.hi, '40', '50', 1000],
    });
  });

  test('time partitions registered with column-key order walk (created_at, id): a JSON cursor, the column bound for the index', () => {
    const walking = compileRun(spec, { ...shape, chunkOrder: 'column-key' });
    const cursor = JSON.stringify(['2024-01-01 03:00:00+00', '10']);
    const hi = JSON.stringify(['2024-01-01 04:30:00.5+00', '7']);
    const fill = walking.fillFromSql(day, cursor, hi);
    expect(fill.text).toContain(
      's."created_at" >= $3::timestamp with time zone AND (s."created_at", s."id") > ($3::timestamp with time zone, $4::bigint) AND ' +
        's."created_at" <= $5::timestamp with time zone AND (s."created_at", s."id") <= ($5::timestamp with time zone, $6::bigint)',
    );
    expect(fill.values).toEqual([day.lo, day.hi, '2024-01-01 03:00:00+00', '10', '2024-01-01 04:30:00.5+00', '7']);
    expect(walking.chunkBounds(day, cursor, 100).text).toMatch(
      /^WITH nth AS \(SELECT s\."created_at" AS c0, s\."id" AS c1 FROM .* ORDER BY s\."created_at", s\."id" OFFSET \$5::integer - 1 LIMIT 1\) .*json_build_array\(nth\.c0::text, nth\.c1::text\)::text FROM nth\), .*ORDER BY s\."created_at" DESC, s\."id" DESC LIMIT 1\) l\)\) AS hi$/s,
    );
    expect(walking.describeRange(day, cursor, null)).toBe(`(created_at, id) in (${cursor}, end of partition]`);
    // the NULL partition has no column order: it walks the key
    const nulls = { kind: 'null' as const, column: 'created_at' };
    expect(walking.fillFromSql(nulls, '10', '20').text).toContain('s."created_at" IS NULL AND s."id" > $1::bigint AND s."id" <= $2::bigint');
    expect(walking.describeRange(nulls, '10', '20')).toBe('id in (10, 20]');
    // a first chunk names the partition's own bound, never an open interval
    expect(walking.describeRange(day, null, hi)).toBe(
      `(created_at, id) from the start of the partition (created_at >= ${day.lo} and < ${day.hi}) through ${hi}`,
    );
    expect(walking.describeRange(nulls, null, '20')).toBe("id from the partition's first row through 20");
    expect(compiled.describeRange({ kind: 'list', column: 'tenant', value: 'acme-secret' }, null, '20')).toBe("id from the partition's first row through 20");
    expect(compiled.describeRange({ kind: 'range', column: 'id', lo: '500', hi: '1000' }, null, '999')).toBe('id in [500, 999]');
    expect(() => walking.fillFromSql(day, '10', null)).toThrow('not a cursor of 2 columns: 10');
  });

  test('a composite key walks as a row comparison: its columns in key order, a JSON cursor, each value cast to its own type', () => {
    const events: Spec = {
      ...spec,
      source: { table: 'public.events', key: ['id', 'occurred_at'] },
      partition: { by: 'range', column: 'id', size: 1000 },
    };
    const composite = compileRun(events, {
      ...shape,
      keyTypes: ['bigint', 'timestamp(3) without time zone'],
      partitionColumnType: 'bigint',
      chunkOrder: 'key',
    });
    const range = { kind: 'range' as const, column: 'id', lo: '1000', hi: '2000' };
    const cursor = JSON.stringify(['1500', '2024-03-01 10:00:00.123']);
    const hi = JSON.stringify(['1600', '2024-01-01 00:00:00']);
    const fill = composite.fillFromSql(range, cursor, hi);
    expect(fill.text).toContain(
      's."id" >= $3::bigint AND (s."id", s."occurred_at") > ($3::bigint, $4::timestamp(3) without time zone) AND ' +
        's."id" <= $5::bigint AND (s."id", s."occurred_at") <= ($5::bigint, $6::timestamp(3) without time zone)',
    );
    expect(fill.values).toEqual(['1000', '2000', '1500', '2024-03-01 10:00:00.123', '1600', '2024-01-01 00:00:00']);
    const first = composite.chunkBounds(range, null, 100).text;
    expect(first).toContain(
      'SELECT s."id" AS c0, s."occurred_at" AS c1 FROM "public"."events" s WHERE s."id" >= $1::bigint AND s."id" < $2::bigint ORDER BY s."id", s."occurred_at" OFFSET $3::integer - 1 LIMIT 1',
    );
    // a short last chunk reads its last row from the other end of the index
    expect(first).toContain(
      'SELECT s."id" AS c0, s."occurred_at" AS c1 FROM "public"."events" s WHERE s."id" >= $1::bigint AND s."id" < $2::bigint ORDER BY s."id" DESC, s."occurred_at" DESC LIMIT 1',
    );
    expect(first).toContain('json_build_array(l.c0::text, l.c1::text)::text');
    expect(composite.readChunk(range, cursor, hi, undefined).text).toMatch(/ORDER BY s\."id", s\."occurred_at"$/);
    expect(composite.describeRange(range, cursor, hi)).toBe(`(id, occurred_at) in (${cursor}, ${hi}]`);
    expect(composite.describeRange(range, null, hi)).toBe(`(id, occurred_at) from the start of the partition (id >= 1000 and < 2000) through ${hi}`);
    expect(() => composite.fillFromSql(range, '1500', null)).toThrow('not a cursor of 2 columns: 1500');
    // walked after a partition column that is not its first: the partition column once, then the rest of the key
    const byTime = compileRun(
      { ...events, partition: { by: 'time', column: 'occurred_at', size: '1 day' } },
      { ...shape, keyTypes: ['bigint', 'timestamp(3) without time zone'], partitionColumnType: 'timestamp(3) without time zone', chunkOrder: 'column-key' },
    );
    const two = JSON.stringify(['2024-01-01 03:00:00', '7']);
    expect(byTime.fillFromSql(day, two, null).text).toContain('(s."occurred_at", s."id") > ($3::timestamp(3) without time zone, $4::bigint)');
    expect(byTime.describeRange(day, two, null)).toBe(`(occurred_at, id) in (${two}, end of partition]`);
  });

  test("bounds cut in a named zone meet a date column as that zone's local time, a timestamptz column as instants", () => {
    const nyDay = { ...day, lo: '2024-03-10T05:00:00.000Z', hi: '2024-03-11T04:00:00.000Z', timeZone: 'America/New_York' };
    const onDate = compileRun(spec, { ...shape, partitionColumnType: 'date' });
    const fill = onDate.fillFromSql(nyDay, null, null);
    expect(fill.text).toContain('s."created_at" >= ($1::timestamptz AT TIME ZONE $2::text) AND s."created_at" < ($3::timestamptz AT TIME ZONE $4::text)');
    expect(fill.values.slice(0, 4)).toEqual([nyDay.lo, 'America/New_York', nyDay.hi, 'America/New_York']);
    expect(compiled.fillFromSql(nyDay, null, null).text).toContain('s."created_at" >= $1::timestamptz AND s."created_at" < $2::timestamptz');
    expect(onDate.outsidePlan([nyDay]).text).toContain(
      's."created_at" < ($1::timestamptz AT TIME ZONE $2::text) OR s."created_at" >= ($3::timestamptz AT TIME ZONE $4::text)',
    );
  });

  test('the first chunk has no lower key bound (no `$1 IS NULL OR` that would defeat the index)', () => {
    const bounds = compiled.chunkBounds(day, null, 100);
    expect(bounds.text).not.toContain('"id" >');
    expect(bounds.values).toEqual([day.lo, day.hi, 100]);
  });

  test('upsert merges only rows whose values differ', () => {
    expect(compiled.write(day, null)).toEqual([
      {
        text:
          `MERGE INTO "public"."totals" t USING ${compiled.outputTable} o ON t."id" = o."id" ` +
          'WHEN MATCHED AND (t."amount") IS DISTINCT FROM (o."amount") THEN UPDATE SET "amount" = o."amount" ' +
          'WHEN NOT MATCHED THEN INSERT ("id", "amount") VALUES (o."id", o."amount")',
        values: [],
      },
    ]);
  });

  test("with an orderable target key, writes read only the chunk's slice of the target, its output's key range read once", () => {
    const ranged = compileRun(spec, { ...shape, targetKeyType: 'bigint' });
    expect(ranged.outputKeyRange).toBe(`SELECT min("id")::text AS lo, max("id")::text AS hi FROM ${ranged.outputTable}`);
    const [merge] = ranged.write(day, { lo: '11', hi: '19' });
    expect(merge.text).toContain(`ON t."id" = o."id" AND t."id" >= $1::bigint AND t."id" <= $2::bigint WHEN`);
    expect(merge.values).toEqual(['11', '19']);
    // an empty chunk's range is NULL to NULL: the write meets no target row (it has no rows to write)
    expect(ranged.write(day, { lo: null, hi: null })[0].values).toEqual([null, null]);
    // a type modifier would be a cast that could round: the parameter takes the type without it
    const precise = compileRun(spec, { ...shape, targetKeyType: 'timestamp(3) without time zone' });
    expect(precise.write(day, { lo: 'a', hi: 'b' })[0].text).toContain(
      `t."id" >= $1::timestamp without time zone AND t."id" <= $2::timestamp without time zone`,
    );
    // uuid has no min() or max(): no range to read, and the plain join
    const uuid = compileRun(spec, { ...shape, targetKeyType: 'uuid' });
    expect(uuid.outputKeyRange).toBeNull();
    expect(uuid.write(day, null)[0].text).toContain('ON t."id" = o."id" WHEN');
    // a full chunk's end is its lim-th row, whatever the key's type (uuid has no max())
    expect(ranged.chunkBounds(day, null, 10).text).toMatch(
      /^WITH nth AS \(SELECT s\."id" AS c0 FROM .* OFFSET \$3::integer - 1 LIMIT 1\) .*coalesce\(\(SELECT nth\.c0::text FROM nth\)/s,
    );
  });

  test("checks and reconciliation read only their rows' slice of the target too; a text key only where the rows sort like the target", () => {
    const ranged = compileRun(spec, { ...shape, targetKeyType: 'bigint' });
    const within = (rows: string) => `t."id" = o."id" AND t."id" >= (SELECT min("id") FROM ${rows}) AND t."id" <= (SELECT max("id") FROM ${rows})`;
    expect(ranged.compareFromSql(day, '10', '20', ['bigint', 'numeric']).text).toContain(`LEFT JOIN "public"."totals" t ON ${within('o')}`);
    expect(ranged.compareFromJson(day, '[]', ['bigint', 'numeric'], false).text).toContain(`LEFT JOIN "public"."totals" t ON ${within('o')}`);
    expect(ranged.previewFromSql(day, '10', '20', ['bigint', 'numeric'], 5).text).toContain(`ON ${within('o')} WHERE`);
    const reconcile = ranged.reconcile({ lo: '11', hi: '19' });
    expect(reconcile.text).toContain(`ON t."id" = o."id" AND t."id" >= $1::bigint AND t."id" <= $2::bigint WHERE`);
    expect(reconcile.values).toEqual(['11', '19']);
    // a computed row set compares text in the default collation, the target column perhaps in another
    const texty = compileRun(spec, { ...shape, targetKeyType: 'text' });
    expect(texty.compareFromSql(day, '10', '20', ['text', 'numeric']).text).toMatch(/ON t\."id" = o\."id"$/);
    // the output table is the target's own type and collation: its range bounds the target's index
    expect(texty.reconcile({ lo: 'a', hi: 'b' }).text).toContain(`AND t."id" >= $1::text AND t."id" <= $2::text`);
  });

  test('update writes existing rows only, and only when they differ', () => {
    const [update] = compileRun({ ...spec, target: { ...spec.target, mode: 'update' } }, shape).write(day, null);
    expect(update.text).toBe(
      `UPDATE "public"."totals" t SET "amount" = o."amount" FROM ${compiled.outputTable} o WHERE t."id" = o."id" AND (t."amount") IS DISTINCT FROM (o."amount")`,
    );
  });

  test('replace deletes the partition rows the transform no longer produces, then merges', () => {
    const replace = compileRun(
      { ...spec, target: { ...spec.target, mode: 'replace', partitionColumn: 'day' } },
      { ...shape, targetPartitionColumnType: 'date' },
    );
    const [del, merge] = replace.write(day, null);
    expect(del.text).toBe(
      `DELETE FROM "public"."totals" t WHERE t."day" >= $1::timestamptz AND t."day" < $2::timestamptz AND NOT EXISTS (SELECT 1 FROM ${compiled.outputTable} o WHERE t."id" = o."id")`,
    );
    expect(del.values).toEqual([day.lo, day.hi]);
    expect(merge.text).toMatch(/^MERGE INTO/);
  });

  test('identifiers are quoted, so keywords work as names', () => {
    const c = compileRun({ ...spec, source: { table: 'order', key: 'user' } }, shape);
    expect(c.chunkBounds({ kind: 'list', column: 'created_at', value: 'x' }, '5', 10).text).toContain(
      'FROM "order" s WHERE s."created_at" = $1::timestamp with time zone AND s."user" > $2::bigint',
    );
  });
});
