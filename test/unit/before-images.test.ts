import { compileBeforeImages, IMAGE_GROUP, UNGROUPED_ROWS } from '../../src/undo/image-statements';
import { compileRun } from '../../src/compiler/statements';
import { compileRevert } from '../../src/undo/restore-statements';
import { revertSpec } from '../../src/undo/revert-run';
import type { Spec } from '../../src/specs/schema';
import { specSchema } from '../../src/specs/schema';
import { resolveSpec, undoKeep } from '../../src/specs/resolve';

const written: Spec = {
  name: 'totals',
  reason: 'r',
  database: 'DATABASE_URL',
  source: { table: 'public.orders', key: 'id' },
  partition: { by: 'range', column: 'id', size: 1000 },
  transform: { name: 't', version: 1, sql: 'SELECT c.id, c.day, c.total AS amount FROM chunk c' },
  target: { table: 'public.totals', key: ['id'], mode: 'upsert' },
  limits: { chunkSize: 100, concurrency: 2 },
};
const base = resolveSpec(written);
const shape = { keyType: 'bigint', partitionColumnType: 'bigint', outputColumns: ['id', 'day', 'amount'], targetKeyType: 'bigint' };
const range = { kind: 'range' as const, column: 'id', lo: '0', hi: '1000' };
const IMAGES = 'backfill_undo."r1"';

/** The chunk output's key range, as chunk.ts reads it after the fill. */
const KEYS = { lo: '3', hi: '97' };
const TABLES = { table: 'backfill_undo."r1"', rowType: 'backfill_undo."r1:row"' };
const packedInto = (select: string) =>
  `WITH img AS (INSERT INTO ${IMAGES} ("backfill:change", "backfill:xid", "backfill:rows") ` +
  `SELECT x.kind, pg_current_xact_id(), array_agg(ROW(x.c0, x.c1, x.c2)::backfill_undo."r1:row") ` +
  `FROM (SELECT s.*, row_number() OVER () - 1 AS n FROM (${select}) s) x GROUP BY x.kind, x.n / 10000 ` +
  `RETURNING cardinality("backfill:rows") AS n) SELECT coalesce(sum(n), 0)::integer AS imaged FROM img`;

describe('compileBeforeImages', () => {
  test('upsert: the rows the merge inserts or changes, with their old values, packed 10,000 to an image row, under the write’s own join', () => {
    const compiled = compileRun(base, shape);
    const [capture, ...more] = compileBeforeImages(base, shape).capture(TABLES, range, KEYS);
    expect(more).toEqual([]);
    expect(capture.values).toEqual(['3', '97']);
    expect(capture.text).toBe(
      packedInto(
        `SELECT CASE WHEN t."id" IS NULL THEN 'i' ELSE 'u' END::"char" AS kind, o."id" AS c0, t."day" AS c1, t."amount" AS c2 ` +
          `FROM ${compiled.outputTable} o LEFT JOIN "public"."totals" t ON t."id" = o."id" ` +
          `AND t."id" >= $1::bigint AND t."id" <= $2::bigint ` +
          `WHERE t."id" IS NULL OR (t."day", t."amount") IS DISTINCT FROM (o."day", o."amount")`,
      ),
    );
    // the same rows the merge writes: its WHEN MATCHED guard is the same expression
    expect(compiled.write(range, KEYS)[0].text).toContain('WHEN MATCHED AND (t."day", t."amount") IS DISTINCT FROM (o."day", o."amount") THEN UPDATE');
  });

  test('a chunk of up to 100,000 output rows keeps one image row per change, without numbering and sorting its rows; a larger one packs them', () => {
    const images = compileBeforeImages(base, shape);
    const [small] = images.capture(TABLES, range, KEYS, UNGROUPED_ROWS);
    expect(small.text).toContain(`::"char" AS kind, o."id" AS c0, t."day" AS c1, t."amount" AS c2 FROM`);
    expect(small.text).toMatch(/\) x GROUP BY x\.kind RETURNING cardinality\("backfill:rows"\) AS n\)/);
    expect(small.text).not.toContain('row_number()');
    const [large] = images.capture(TABLES, range, KEYS, UNGROUPED_ROWS + 1);
    expect(large.text).toContain('row_number() OVER () - 1 AS n');
    expect(large.text).toContain(`GROUP BY x.kind, x.n / ${IMAGE_GROUP}`);
    // replace mode's deleted rows are not bounded by the output: always packed
    const spec = { ...base, target: { ...base.target, mode: 'replace' as const, partitionColumn: 'day' } };
    const [deleted, changed] = compileBeforeImages(spec, { ...shape, targetPartitionColumnType: 'bigint', targetColumns: ['id', 'day', 'amount'] }).capture(
      TABLES,
      { ...range, column: 'id' },
      KEYS,
      10,
    );
    expect(deleted.text).toContain(`GROUP BY x.kind, x.n / ${IMAGE_GROUP}`);
    expect(changed.text).not.toContain('row_number()');
  });

  test('where the shape says imageKeys, an inserted row is kept as its key, one plain array per key column; changed rows as rows', () => {
    const keyed = { ...shape, imageKeys: true };
    const images = compileBeforeImages(base, keyed);
    const [capture] = images.capture(TABLES, range, KEYS, 5000);
    // where the chunk's key range holds no target row, the output's keys alone; else the join
    const holds = `EXISTS (SELECT 1 FROM "public"."totals" t WHERE t."id" >= $3::bigint AND t."id" <= $4::bigint)`;
    expect(capture.values).toEqual(['3', '97', '3', '97']);
    expect(capture.text).toContain(
      `INSERT INTO ${IMAGES} ("backfill:change", "backfill:xid", "backfill:rows", "backfill:key:0") ` +
        `SELECT 'i'::"char", pg_current_xact_id(), NULL::backfill_undo."r1:row"[], array_agg(o."id") FROM ${compileRun(base, shape).outputTable} o ` +
        `WHERE NOT ${holds} HAVING count(*) > 0 UNION ALL SELECT x.kind, pg_current_xact_id(), ` +
        `array_agg(ROW(x.c0, x.c1, x.c2)::backfill_undo."r1:row") FILTER (WHERE x.kind <> 'i'), array_agg(x.c0) FILTER (WHERE x.kind = 'i') FROM (`,
    );
    expect(capture.text).toContain(`) x WHERE ${holds} GROUP BY x.kind RETURNING coalesce(cardinality("backfill:rows"), cardinality("backfill:key:0")) AS n`);
    // without a key range (a key type whose min() and max() do not follow its index), the join alone
    const [joined] = images.capture(TABLES, range, null, 5000);
    expect(joined.text).not.toContain('EXISTS');
    expect(joined.text).toContain(`INSERT INTO ${IMAGES} ("backfill:change", "backfill:xid", "backfill:rows", "backfill:key:0") SELECT x.kind, `);
    expect(images.createTables(TABLES)).toEqual([
      `CREATE TABLE backfill_undo."r1:row" AS SELECT t."id", t."day", t."amount" FROM "public"."totals" t WITH NO DATA`,
      `CREATE TABLE ${IMAGES} WITH (autovacuum_enabled = false) AS SELECT NULL::"char" AS "backfill:change", NULL::xid8 AS "backfill:xid", ` +
        `NULL::backfill_undo."r1:row"[] AS "backfill:rows", ARRAY[r."id"] AS "backfill:key:0" FROM backfill_undo."r1:row" r WITH NO DATA`,
      `ALTER TABLE ${IMAGES} ALTER "backfill:change" SET NOT NULL, ALTER "backfill:xid" SET NOT NULL, ALTER "backfill:key:0" SET STORAGE EXTERNAL, ` +
        `ADD CHECK (("backfill:rows" IS NULL) <> ("backfill:key:0" IS NULL))`,
    ]);
    // revert reads both back as rows of the row type: an inserted row's other columns NULL
    expect(images.unpacked(TABLES)).toBe(
      `(SELECT i."backfill:change", i."backfill:xid", u.* FROM ${IMAGES} i CROSS JOIN LATERAL unnest(i."backfill:rows") u WHERE i."backfill:xid" = $1::xid8 ` +
        `UNION ALL SELECT i."backfill:change", i."backfill:xid", (ROW(k.k0, NULL, NULL)::backfill_undo."r1:row").* FROM ${IMAGES} i ` +
        `CROSS JOIN LATERAL unnest(i."backfill:key:0") AS k(k0) WHERE i."backfill:xid" = $1::xid8 AND i."backfill:rows" IS NULL)`,
    );
    // a composite key: an array per column, each from and back to its place in the row (replace
    // mode keeps whole rows in the target's column order)
    const composite = { ...base, target: { ...base.target, key: ['day', 'id'], mode: 'replace' as const, partitionColumn: 'day' } };
    const wholeRows = { ...keyed, targetPartitionColumnType: 'bigint', targetColumns: ['id', 'day', 'amount'] };
    const [, two] = compileBeforeImages(composite, wholeRows).capture(TABLES, { ...range, column: 'id' }, KEYS, 5000);
    expect(two.text).toContain(`array_agg(x.c1) FILTER (WHERE x.kind = 'i'), array_agg(x.c0) FILTER (WHERE x.kind = 'i')`);
    expect(compileBeforeImages(composite, wholeRows).unpacked(TABLES)).toContain(`(ROW(k.k1, k.k0, NULL)::backfill_undo."r1:row").*`);
  });

  test('update: only existing rows that change; nothing to image when only the key is output', () => {
    const spec = { ...base, target: { ...base.target, mode: 'update' as const } };
    const [capture] = compileBeforeImages(spec, shape).capture(TABLES, range, KEYS);
    expect(capture.text).toContain(`SELECT 'u'::"char" AS kind, o."id" AS c0, t."day" AS c1, t."amount" AS c2 FROM`);
    expect(capture.text).toContain(' JOIN "public"."totals" t ON');
    expect(capture.text).not.toContain('LEFT JOIN');
    expect(compileBeforeImages(spec, { ...shape, outputColumns: ['id'] }).capture(TABLES, range, KEYS)).toEqual([]);
  });

  test('replace: whole old rows of the partition it deletes, by the column names registered, then the merge’s rows', () => {
    const spec = { ...base, target: { ...base.target, mode: 'replace' as const, partitionColumn: 'day' } };
    const replaceShape = { ...shape, targetPartitionColumnType: 'bigint', targetColumns: ['id', 'day', 'amount', 'note'] };
    const compiled = compileBeforeImages(spec, replaceShape);
    const [deleted, changed] = compiled.capture(TABLES, { ...range, column: 'id' }, KEYS);
    expect(deleted.text).toContain(
      `FROM (SELECT 'd'::"char" AS kind, t."id" AS c0, t."day" AS c1, t."amount" AS c2, t."note" AS c3 FROM "public"."totals" t WHERE t."day" >= $1::bigint AND t."day" < $2::bigint AND NOT EXISTS`,
    );
    expect(deleted.text).toContain('array_agg(ROW(x.c0, x.c1, x.c2, x.c3)::backfill_undo."r1:row")');
    expect(deleted.values).toEqual(['0', '1000']);
    // an output column the target has but the run does not write is kept as NULL for updated rows
    expect(changed.text).toContain(`o."id" AS c0, t."day" AS c1, t."amount" AS c2, NULL AS c3`);
    expect(compiled.createTables(TABLES)).toEqual([
      `CREATE TABLE backfill_undo."r1:row" AS SELECT t."id", t."day", t."amount", t."note" FROM "public"."totals" t WITH NO DATA`,
      `CREATE TABLE ${IMAGES} ("backfill:change" "char" NOT NULL, "backfill:xid" xid8 NOT NULL, "backfill:rows" backfill_undo."r1:row"[] NOT NULL) WITH (autovacuum_enabled = false)`,
    ]);
    // a run registered without the target's columns cannot keep whole rows: refused, not guessed
    expect(() => compileBeforeImages(spec, { ...replaceShape, targetColumns: undefined })).toThrow(/targetColumns/);
  });

  test('plan’s sample tables are temporary and go with their transaction', () => {
    const [row, images] = compileBeforeImages(base, shape).createTables({ table: 'pg_temp.s', rowType: 'pg_temp.s_row' }, { temporary: true });
    expect(row).toMatch(/^CREATE TEMP TABLE s_row ON COMMIT DROP AS SELECT /);
    expect(images).toMatch(/^CREATE TEMP TABLE s \(.*"backfill:rows" pg_temp.s_row\[\] NOT NULL\) ON COMMIT DROP$/);
  });
});

describe('compileRevert', () => {
  const spec = { ...base, target: { ...base.target, key: ['id'] } };
  const compiled = compileRevert(spec, shape, TABLES, {});
  const unpacked = `(SELECT i."backfill:change", i."backfill:xid", u.* FROM ${IMAGES} i CROSS JOIN LATERAL unnest(i."backfill:rows") u WHERE i."backfill:xid" = $1::xid8)`;

  test('restores only rows that are still the version the original chunk wrote (xmin), each kind by its own step, in one statement', () => {
    const restore = compiled.restore('1234');
    expect(restore.values).toEqual(['1234']);
    expect(restore.text).toBe(
      `WITH img AS MATERIALIZED (SELECT * FROM ${unpacked} i), ` +
        `updated AS (UPDATE "public"."totals" t SET "day" = i."day", "amount" = i."amount" FROM img i WHERE i."backfill:change" = 'u' AND t."id" = i."id" AND t.xmin = i."backfill:xid"::xid RETURNING 1), ` +
        `inserted AS (DELETE FROM "public"."totals" t USING img i WHERE i."backfill:change" = 'i' AND t."id" = i."id" AND t.xmin = i."backfill:xid"::xid RETURNING 1) ` +
        'SELECT ((SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted))::integer AS restored',
    );
  });

  test('replace mode also inserts back what it deleted, identity values included, where the key is free', () => {
    const replace = { ...spec, target: { ...spec.target, mode: 'replace' as const, partitionColumn: 'day' } };
    const text = compileRevert(replace, { ...shape, targetColumns: ['id', 'day', 'amount', 'total'] }, TABLES, {
      insertColumns: ['id', 'day', 'amount'],
    }).restore('7').text;
    expect(text).toContain(
      `deleted AS (INSERT INTO "public"."totals" ("id", "day", "amount") OVERRIDING SYSTEM VALUE SELECT i."id", i."day", i."amount" FROM img i ` +
        `WHERE i."backfill:change" = 'd' AND NOT EXISTS (SELECT 1 FROM "public"."totals" t WHERE t."id" = i."id") RETURNING 1)`,
    );
    expect(text).toContain('+ (SELECT count(*) FROM deleted))::integer AS restored');
  });

  test('a row is as before the run, as the run left it, or a conflict — never two of them', () => {
    const tally = compiled.tally('1').text;
    expect(tally).toContain(
      `count(*) FILTER (WHERE CASE i."backfill:change" WHEN 'd' THEN NOT t."id" IS NOT NULL ELSE t."id" IS NOT NULL AND t.xmin = i."backfill:xid"::xid END)::integer AS after`,
    );
    expect(tally).toContain(`ELSE t."id" IS NOT NULL AND (t."day", t."amount") IS NOT DISTINCT FROM (i."day", i."amount") END`);
    expect(tally).toContain(`FROM ${unpacked} i LEFT JOIN "public"."totals" t ON t."id" = i."id"`);
    expect(compiled.conflicts('1').text).toMatch(/^SELECT i."id"::text AS key, CASE i."backfill:change" WHEN 'u' THEN 'updated'/);
  });
});

describe('undo in the spec', () => {
  test('kept 14 days unless the spec says otherwise; off keeps none', () => {
    expect(undoKeep(resolveSpec(written))).toBe('14 days');
    expect(undoKeep(resolveSpec({ ...written, undo: { keep: '2 weeks' } }))).toBe('2 weeks');
    expect(undoKeep(resolveSpec({ ...written, undo: 'off' }))).toBeNull();
  });

  test.each([
    [{ keep: 'forever' }, 'undo.keep: must be an interval such as "14 days", "12 hours" or "1 month"'],
    ['never', 'undo: must be off, or { keep: "14 days" } (how long before-images are kept after the run)'],
    [{ keep: '1 day', extra: 1 }, 'undo: Unrecognized key: "extra"'],
  ])('%j is refused: %s', (undo, message) => {
    const parsed = specSchema.safeParse({ ...written, undo });
    expect(parsed.success).toBe(false);
    const issue = parsed.error!.issues[0];
    expect(`${issue.path.join('.')}: ${issue.message}`).toBe(message);
  });
});

describe('revertSpec', () => {
  test('the original renamed, without gates, tail splitting or images of its own; after-actions kept', () => {
    const original = {
      ...written,
      name: 'x'.repeat(63),
      limits: { chunkSize: 100, concurrency: 2, splitTail: true },
      validate: { canary: { partitions: 1 } },
      after: [{ action: 'analyze' as const }],
    } as Spec;
    const spec = revertSpec(original, 'wrong rates');
    expect(spec.name).toBe(`${'x'.repeat(56)}-revert`);
    expect(specSchema.safeParse(spec).success).toBe(true);
    expect(spec).toMatchObject({ reason: 'wrong rates', undo: 'off', after: [{ action: 'analyze' }], limits: { chunkSize: 100, concurrency: 2 } });
    expect(spec.validate).toBeUndefined();
    expect(spec.limits.splitTail).toBeUndefined();
  });
});
