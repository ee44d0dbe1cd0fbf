/**
 * Before-images (docs/undo.md) on the real servers, on a table unlike the demo's: a quoted
 * mixed-case schema and table, a composite key, numeric(12,2), timestamp(3), and a column the run
 * does not write. For each write mode, the target before the run is snapshotted; after it, the
 * images put back on a copy of the target (deleting what the run inserted, restoring what it
 * updated, re-inserting what replace mode deleted) give that snapshot row for row, both ways —
 * and every image's written values are what the target now holds.
 */
import { waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import type { SpecInput } from '../src/specs/schema';
import { quoteIdent } from '../src/db/sql';

const env = useTestEnvironment('before-images', { rows: 0 });
const ORDERS = 3_000;
const LINES = 3;
const TARGET = '"Shop"."LineTotals"';
/** The columns the run writes, after the key. */
const WRITTEN = ['total', 'note', 'updatedAt'];

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE SCHEMA "Shop";
    CREATE TABLE "Shop"."Order Lines" (order_id bigint, line_no smallint, sku text NOT NULL, qty integer NOT NULL, price numeric(10,2) NOT NULL,
                                       placed_at timestamp(3) NOT NULL, PRIMARY KEY (order_id, line_no));
    INSERT INTO "Shop"."Order Lines"
      SELECT o, l, 'sku-' || (o * 7 + l) % 97, 1 + (o + l) % 5, ((o * 13 + l) % 5000) / 100.0 + 1, timestamp '2026-01-01 00:00:00.123' + o * interval '1 minute'
        FROM generate_series(1, ${ORDERS}) o, generate_series(1, ${LINES}) l;
    CREATE TABLE ${TARGET} (order_id bigint, line_no smallint, total numeric(12,2), note text, "updatedAt" timestamp(3), kept text DEFAULT 'untouched',
                            PRIMARY KEY (order_id, line_no));
  `);
});

const TRANSFORM = `SELECT order_id, line_no, (qty * price)::numeric(12,2) AS total, upper(sku) AS note, placed_at AS "updatedAt" FROM chunk`;

function spec(mode: 'upsert' | 'update' | 'replace', extra: Partial<SpecInput> = {}): SpecInput {
  return {
    name: `images-${mode}${extra.undo === 'off' ? '-off' : ''}`,
    reason: 'before-images test',
    database: env.db.envVar,
    source: { table: 'Shop.Order Lines', key: ['order_id', 'line_no'] },
    partition: { by: 'range', column: 'order_id', size: 1_000 },
    transform: { name: 'line-totals', version: 1, sql: TRANSFORM },
    target: { table: 'Shop.LineTotals', key: ['order_id', 'line_no'], mode, ...(mode === 'replace' ? { partitionColumn: 'order_id' } : {}) },
    limits: { chunkSize: 500, concurrency: 2 },
    ...extra,
  } as SpecInput;
}

/**
 * The target before the run: a third of the lines as the transform computes them (unchanged by
 * the run), a third with other values (updated), a third absent (inserted by upsert and replace;
 * update mode skips them); replace mode also finds rows the transform does not produce (line 9 of
 * some orders: deleted). `kept` holds a value no run writes.
 */
async function seedTarget(): Promise<void> {
  await env.db.pool.query(`TRUNCATE ${TARGET}`);
  await env.db.pool.query(`
    INSERT INTO ${TARGET} (order_id, line_no, total, note, "updatedAt", kept)
      SELECT order_id, line_no,
             CASE WHEN (order_id + line_no) % 3 = 0 THEN (qty * price)::numeric(12,2) ELSE 0.01 END,
             CASE WHEN (order_id + line_no) % 3 = 0 THEN upper(sku) ELSE NULL END,
             placed_at, 'kept ' || order_id
        FROM "Shop"."Order Lines" WHERE (order_id + line_no) % 3 <> 2;
    INSERT INTO ${TARGET} (order_id, line_no, total, note, kept) SELECT o, 9, 9.99, 'stray', 'stray' FROM generate_series(1, ${ORDERS}, 7) o;
  `);
}

async function snapshot(name: string): Promise<void> {
  await env.db.pool.query(`DROP TABLE IF EXISTS "Shop".${quoteIdent(name)}; CREATE TABLE "Shop".${quoteIdent(name)} AS SELECT * FROM ${TARGET}`);
}

/** The images applied to a copy of the target, the way a revert would: returns the copy's name. */
async function undoOnCopy(images: string): Promise<string> {
  await snapshot('undone');
  const key = `u.order_id = i.order_id AND u.line_no = i.line_no`;
  await env.db.pool.query(`
    DELETE FROM "Shop"."undone" u USING ${images} i WHERE ${key} AND i."backfill:change" = 'i';
    UPDATE "Shop"."undone" u SET total = i.total, note = i.note, "updatedAt" = i."updatedAt" FROM ${images} i WHERE ${key} AND i."backfill:change" = 'u';
  `);
  const { rows } = await env.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${images} WHERE "backfill:change" = 'd'`);
  if (Number(rows[0].n) > 0) {
    await env.db.pool.query(
      `INSERT INTO "Shop"."undone" SELECT order_id, line_no, total, note, "updatedAt", kept FROM ${images} WHERE "backfill:change" = 'd'`,
    );
  }
  return '"Shop"."undone"';
}

async function differences(a: string, b: string): Promise<{ onlyA: number; onlyB: number }> {
  const { rows } = await env.db.pool.query<{ a: string; b: string }>(
    `SELECT (SELECT count(*) FROM (TABLE ${a} EXCEPT ALL TABLE ${b}) x) AS a, (SELECT count(*) FROM (TABLE ${b} EXCEPT ALL TABLE ${a}) x) AS b`,
  );
  return { onlyA: Number(rows[0].a), onlyB: Number(rows[0].b) };
}

async function imageCounts(images: string): Promise<Record<string, number>> {
  const { rows } = await env.db.pool.query<{ change: string; n: string }>(
    `SELECT "backfill:change" AS change, count(*) AS n FROM ${images} GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.change, Number(r.n)]));
}

const lines = ORDERS * LINES;
const strays = Math.ceil(ORDERS / 7);
const EXPECTED: Record<string, Record<string, number>> = {
  // (order_id + line_no) % 3: 0 unchanged, 1 updated, 2 absent
  upsert: { i: lines / 3, u: lines / 3 },
  update: { u: lines / 3 },
  replace: { d: strays, i: lines / 3, u: lines / 3 },
};

describe.each(['upsert', 'update', 'replace'] as const)('%s mode', (mode) => {
  test('keeps one image per row it changed; put back, they give the target as it was, row for row', async () => {
    await seedTarget();
    await snapshot('before');
    const started = await env.start(spec(mode));
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');

    const { rows: run } = await env.db.pool.query('SELECT undo_table, undo_keep FROM backfill.runs WHERE run_id = $1', [started.runId]);
    expect(run[0]).toEqual({ undo_table: `backfill_undo.${quoteIdent(started.runId)}`, undo_keep: '14 days' });
    const images = run[0].undo_table as string;
    expect(await imageCounts(images)).toEqual(EXPECTED[mode]);
    const written = Object.values(EXPECTED[mode]).reduce((a, b) => a + b, 0);
    expect(result.rowsWritten).toBe(written);

    // what each image says the run wrote is what the target holds now
    const after = WRITTEN.map((c, i) => `(t.${quoteIdent(c)} IS NOT DISTINCT FROM i.${quoteIdent(`backfill:after:${i + 1}`)})`).join(' AND ');
    const { rows: stale } = await env.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${images} i LEFT JOIN ${TARGET} t USING (order_id, line_no) WHERE i."backfill:change" <> 'd' AND NOT coalesce(${after}, false)`,
    );
    expect(Number(stale[0].n)).toBe(0);
    // every image names a partition of the run
    const { rows: partitions } = await env.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${images} i WHERE NOT EXISTS (SELECT 1 FROM backfill.partitions p WHERE p.run_id = $1 AND p.partition_id = i."backfill:partition")`,
      [started.runId],
    );
    expect(Number(partitions[0].n)).toBe(0);

    expect(await differences(await undoOnCopy(images), '"Shop"."before"')).toEqual({ onlyA: 0, onlyB: 0 });
    // and the run really changed something, or the line above proves nothing
    const counts = EXPECTED[mode];
    const changed = { onlyA: (counts.i ?? 0) + (counts.u ?? 0), onlyB: (counts.u ?? 0) + (counts.d ?? 0) };
    expect(await differences(TARGET, '"Shop"."before"')).toEqual(changed);
  });
});

test('undo: off keeps no images and says so in the run', async () => {
  await seedTarget();
  const started = await env.start(spec('upsert', { undo: 'off' }));
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  const { rows } = await env.db.pool.query(
    `SELECT undo_table, undo_keep, to_regclass($2) AS images, (SELECT detail->>'undo' FROM backfill.run_events WHERE run_id = $1 AND kind = 'registered') AS recorded
       FROM backfill.runs WHERE run_id = $1`,
    [started.runId, `backfill_undo.${quoteIdent(started.runId)}`],
  );
  expect(rows[0]).toEqual({ undo_table: null, undo_keep: null, images: null, recorded: 'off' });
});

test('undo: { keep } is recorded as written', async () => {
  await seedTarget();
  const started = await env.start(spec('update', { undo: { keep: '3 days' }, name: 'images-keep' }));
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  const { rows } = await env.db.pool.query('SELECT undo_keep FROM backfill.runs WHERE run_id = $1', [started.runId]);
  expect(rows[0].undo_keep).toBe('3 days');
});

test('a trigger that skips some of the write’s rows fails the partition before it commits: the images could not undo it exactly', async () => {
  await seedTarget();
  await env.db.pool.query(`
    CREATE FUNCTION "Shop".skip_odd() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.order_id % 2 = 1 THEN RETURN NULL; END IF; RETURN NEW; END $$;
    CREATE TRIGGER skip_odd BEFORE UPDATE ON ${TARGET} FOR EACH ROW EXECUTE FUNCTION "Shop".skip_odd();
  `);
  try {
    const started = await env.start(spec('update', { name: 'images-trigger', partition: { by: 'range', column: 'order_id', size: 4_000 } }));
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('failed');
    const { rows } = await env.db.pool.query<{ last_error: string; images: string }>(
      `SELECT last_error, (SELECT count(*) FROM backfill_undo.${quoteIdent(started.runId)}) AS images FROM backfill.partitions WHERE run_id = $1`,
      [started.runId],
    );
    expect(rows[0].last_error).toMatch(
      /^partition order_id:\S+ failed at .*: the write changed \d+ row\(s\) of Shop\.LineTotals but \d+ were about to change when their before-images were taken; a trigger or rule/,
    );
    expect(rows[0].last_error).toContain('set undo: off in the spec (docs/undo.md)');
    expect(rows[0].images).toBe('0');
  } finally {
    await env.db.pool.query(`DROP TRIGGER skip_odd ON ${TARGET}`);
  }
});
