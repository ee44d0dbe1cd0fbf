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
import { runImages } from '../src/undo/run-images';
import type { SpecInput } from '../src/specs/schema';
import { quoteIdent } from '../src/db/sql';
import { CHANGES, createLineTotals, differences as diff, lineTotalsSpec, seedLineTotals, snapshotLineTotals, TARGET } from './helpers/line-totals';

const env = useTestEnvironment('before-images', { rows: 0 });
beforeAll(() => createLineTotals(env.db.pool));

const spec = (mode: 'upsert' | 'update' | 'replace', extra: Partial<SpecInput> = {}) =>
  lineTotalsSpec(env.db.envVar, mode, { name: `images-${mode}${extra.undo === 'off' ? '-off' : ''}`, ...extra });
const seedTarget = () => seedLineTotals(env.db.pool);

const snapshot = (name: string) => snapshotLineTotals(env.db.pool, name);

/** The images applied to a copy of the target, the way a revert would: returns the copy's name. */
async function undoOnCopy(images: string): Promise<string> {
  await snapshot('undone');
  const key = `u.order_id = i.order_id AND u.line_no = i.line_no`;
  await env.db.pool.query(`
    DELETE FROM "Shop"."undone" u USING ${images} AS i WHERE ${key} AND i."backfill:change" = 'i';
    UPDATE "Shop"."undone" u SET total = i.total, note = i.note, "updatedAt" = i."updatedAt" FROM ${images} AS i WHERE ${key} AND i."backfill:change" = 'u';
  `);
  const { rows } = await env.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${images} AS i WHERE "backfill:change" = 'd'`);
  if (Number(rows[0].n) > 0) {
    await env.db.pool.query(
      `INSERT INTO "Shop"."undone" SELECT order_id, line_no, total, note, "updatedAt", kept FROM ${images} AS i WHERE "backfill:change" = 'd'`,
    );
  }
  return '"Shop"."undone"';
}

const differences = (a: string, b: string) => diff(env.db.pool, a, b);

async function imageCounts(images: string): Promise<Record<string, number>> {
  const { rows } = await env.db.pool.query<{ change: string; n: string }>(
    `SELECT "backfill:change" AS change, count(*) AS n FROM ${images} AS i GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.change, Number(r.n)]));
}

const EXPECTED = CHANGES;

describe.each(['upsert', 'update', 'replace'] as const)('%s mode', (mode) => {
  test('keeps one image per row it changed; put back, they give the target as it was, row for row', async () => {
    await seedTarget();
    await snapshot('before');
    const started = await env.start(spec(mode));
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');

    const { rows: run } = await env.db.pool.query('SELECT undo_table, undo_keep FROM backfill.runs WHERE run_id = $1', [started.runId]);
    expect(run[0]).toEqual({ undo_table: `backfill_undo.${quoteIdent(started.runId)}`, undo_keep: '14 days' });
    // one SQL row per imaged target row: the table keeps them packed, a few image rows per chunk
    const images = await runImages(env.db.pool, started.runId);
    expect(await imageCounts(images)).toEqual(EXPECTED[mode]);
    const written = Object.values(EXPECTED[mode]).reduce((a, b) => a + b, 0);
    expect(result.rowsWritten).toBe(written);

    // every image carries the transaction of a chunk of this run, and the rows it wrote are still that version
    const { rows: foreign } = await env.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${images} AS i WHERE NOT EXISTS (SELECT 1 FROM backfill.chunks c WHERE c.run_id = $1 AND c.xid = i."backfill:xid")`,
      [started.runId],
    );
    expect(Number(foreign[0].n)).toBe(0);
    const { rows: moved } = await env.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${images} AS i LEFT JOIN ${TARGET} t USING (order_id, line_no)
        WHERE i."backfill:change" <> 'd' AND t.xmin IS DISTINCT FROM i."backfill:xid"::xid`,
    );
    expect(Number(moved[0].n)).toBe(0);
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
