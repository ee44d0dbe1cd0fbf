import { compileBeforeImages } from '../../src/compiler/before-images';
import { compileRun } from '../../src/compiler/statements';
import type { Spec } from '../../src/specs/schema';
import { undoKeep, specSchema } from '../../src/specs/schema';

const base: Spec = {
  name: 'totals',
  reason: 'r',
  database: 'DATABASE_URL',
  source: { table: 'public.orders', key: 'id' },
  partition: { by: 'range', column: 'id', size: 1000 },
  transform: { name: 't', version: 1, sql: 'SELECT c.id, c.day, c.total AS amount FROM chunk c' },
  target: { table: 'public.totals', key: ['id'], mode: 'upsert' },
  limits: { chunkSize: 100, concurrency: 2 },
};
const shape = { keyType: 'bigint', partitionColumnType: 'bigint', outputColumns: ['id', 'day', 'amount'], targetKeyType: 'bigint' };
const range = { kind: 'range' as const, column: 'id', lo: '0', hi: '1000' };
const IMAGES = 'backfill_undo."r1"';

describe('compileBeforeImages', () => {
  test('upsert: the rows the merge inserts or changes, old values beside the ones written, under the write’s own join', () => {
    const compiled = compileRun(base, shape);
    const [capture, ...more] = compileBeforeImages(base, shape).capture(IMAGES, range, 'p1');
    expect(more).toEqual([]);
    expect(capture.values).toEqual(['p1']);
    expect(capture.text).toBe(
      `INSERT INTO ${IMAGES} ("id", "day", "amount", "backfill:partition", "backfill:change", "backfill:after:1", "backfill:after:2") ` +
        `SELECT o."id", t."day", t."amount", $1::text, CASE WHEN t."id" IS NULL THEN 'i' ELSE 'u' END, o."day", o."amount" ` +
        `FROM ${compiled.outputTable} o LEFT JOIN "public"."totals" t ON t."id" = o."id" ` +
        `AND t."id" >= (SELECT min("id") FROM ${compiled.outputTable}) AND t."id" <= (SELECT max("id") FROM ${compiled.outputTable}) ` +
        `WHERE t."id" IS NULL OR (t."day", t."amount") IS DISTINCT FROM (o."day", o."amount")`,
    );
    // the same rows the merge writes: its WHEN MATCHED guard is the same expression
    expect(compiled.write(range)[0].text).toContain('WHEN MATCHED AND (t."day", t."amount") IS DISTINCT FROM (o."day", o."amount") THEN UPDATE');
  });

  test('update: only existing rows that change; nothing to image when only the key is output', () => {
    const spec = { ...base, target: { ...base.target, mode: 'update' as const } };
    const [capture] = compileBeforeImages(spec, shape).capture(IMAGES, range, 'p1');
    expect(capture.text).toContain(`SELECT o."id", t."day", t."amount", $1::text, 'u', o."day", o."amount" FROM`);
    expect(capture.text).toContain(' JOIN "public"."totals" t ON');
    expect(capture.text).not.toContain('LEFT JOIN');
    expect(compileBeforeImages(spec, { ...shape, outputColumns: ['id'] }).capture(IMAGES, range, 'p1')).toEqual([]);
  });

  test('replace: whole old rows of the partition it deletes, by the column names registered, then the merge’s rows', () => {
    const spec = { ...base, target: { ...base.target, mode: 'replace' as const, partitionColumn: 'day' } };
    const replaceShape = { ...shape, targetPartitionColumnType: 'bigint', targetColumns: ['id', 'day', 'amount', 'note'] };
    const [deleted, changed] = compileBeforeImages(spec, replaceShape).capture(IMAGES, { ...range, column: 'id' }, 'p7');
    expect(deleted.text).toMatch(
      /^INSERT INTO backfill_undo."r1" \("id", "day", "amount", "note", "backfill:partition", "backfill:change"\) SELECT t."id", t."day", t."amount", t."note", \$3::text, 'd' FROM "public"."totals" t WHERE t."day" >= \$1::bigint AND t."day" < \$2::bigint AND NOT EXISTS/,
    );
    expect(deleted.values).toEqual(['0', '1000', 'p7']);
    expect(changed.text).toContain(`CASE WHEN t."id" IS NULL THEN 'i' ELSE 'u' END`);
    expect(compileBeforeImages(spec, replaceShape).createTable(IMAGES)).toBe(
      `CREATE TABLE ${IMAGES} WITH (autovacuum_enabled = false) AS SELECT t."id", t."day", t."amount", t."note", NULL::text AS "backfill:partition", ` +
        `NULL::"char" AS "backfill:change", t."day" AS "backfill:after:1", t."amount" AS "backfill:after:2" FROM "public"."totals" t WITH NO DATA`,
    );
    // a run registered without the target's columns cannot keep whole rows: refused, not guessed
    expect(() => compileBeforeImages(spec, { ...replaceShape, targetColumns: undefined })).toThrow(/targetColumns/);
  });

  test('a target column named like the images’ own is refused, with the way out', () => {
    expect(() => compileBeforeImages(base, { ...shape, outputColumns: ['id', 'backfill:change'] })).toThrow(
      'target column backfill:change starts with "backfill:", which before-images use for their own columns; rename it, or set undo: off in the spec',
    );
  });

  test('plan’s sample table is temporary and goes with its transaction', () => {
    expect(compileBeforeImages(base, shape).createTable('sample_images', { temporary: true })).toMatch(
      /^CREATE TEMP TABLE sample_images ON COMMIT DROP AS SELECT/,
    );
  });
});

describe('undo in the spec', () => {
  test('kept 14 days unless the spec says otherwise; off keeps none', () => {
    expect(undoKeep(base)).toBe('14 days');
    expect(undoKeep({ undo: { keep: '2 weeks' } })).toBe('2 weeks');
    expect(undoKeep({ undo: 'off' })).toBeNull();
  });

  test.each([
    [{ keep: 'forever' }, 'undo.keep: must be an interval such as "14 days", "12 hours" or "1 month"'],
    ['never', 'undo: must be off, or { keep: "14 days" } (how long before-images are kept after the run)'],
    [{ keep: '1 day', extra: 1 }, 'undo: Unrecognized key: "extra"'],
  ])('%j is refused: %s', (undo, message) => {
    const parsed = specSchema.safeParse({ ...base, undo });
    expect(parsed.success).toBe(false);
    const issue = parsed.error!.issues[0];
    expect(`${issue.path.join('.')}: ${issue.message}`).toBe(message);
  });
});
