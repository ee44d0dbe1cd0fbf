/**
 * Before-images (docs/undo.md): for every target row a chunk's write is about to change, the
 * values it holds now — taken in the chunk's transaction, just before the write and under the
 * same snapshot, so an image exists exactly when the write committed.
 *
 * A run keeps them in a table of its own, a few rows per chunk rather than one per target row:
 * each image row holds up to IMAGE_GROUP rows of one change as an array of a row type made for
 * the run (an empty table of the key columns and the columns the run writes — replace mode:
 * every target column — typed like the target, so values stay exact: no JSON or text round
 * trip). Packed so, a chunk's images cost a few large values, compressed, instead of a heap
 * tuple per row: a backfill that inserts every row would otherwise write a second table.
 *
 * - `backfill:change`: `u` updated (the written columns hold their old values), `i` inserted
 *   (the key alone: undoing it is a delete), `d` deleted by replace mode (the whole old row);
 * - `backfill:xid`: the chunk's transaction, which the chunk log records too. Every row version
 *   the write leaves carries it as its `xmin`, and any later change to the row makes a new
 *   version with another: a revert restores a row only while its `xmin` is still the chunk's,
 *   so it never undoes someone else's write — without keeping a copy of what the run wrote.
 *   (The chunk's transaction has no subtransactions: its writes carry the top-level id.)
 * - `backfill:rows`: the rows.
 * - `backfill:key:N` (runs whose shape says `imageKeys`): an inserted row's image is its key —
 *   undoing it is a delete by that key — so inserted rows are kept as one plain array per key
 *   column, `backfill:rows` NULL. A row of the row type costs a tuple header and its own
 *   formation per element, and compressing them more; a `bigint[]` eight bytes a row, stored
 *   as is (EXTERNAL). Runs registered before it, and keys of an array type (arrays of arrays
 *   must be rectangular), keep inserted rows as rows like the others.
 *
 * A chunk of up to UNGROUPED_ROWS output rows keeps one image row per change; a larger one (a
 * replace partition is one chunk) numbers its rows and packs them IMAGE_GROUP to an image row,
 * which takes a window over the rows and a sort of them: about half of what the images of a
 * 100,000-row chunk cost (bench/RESULTS.md, "Before-images").
 */
import { quoteIdent } from '../db/sql';
import type { PartitionBounds } from '../domain/types';
import type { ResolvedSpec } from '../specs/resolve';
import { params } from '../compiler/partition-predicate';
import type { RunShape } from '../compiler/shape';
import type { Statement } from '../compiler/statements';
import { targetJoin, targetPartitionScope, type OutputKeyRange } from '../compiler/target-join';

export const IMAGE_CHANGE = 'backfill:change';
export const IMAGE_XID = 'backfill:xid';
export const IMAGE_ROWS = 'backfill:rows';
/** Rows per image row of a large chunk: large enough that its images are a few values, small enough to stay far below a value's 1 GB. */
export const IMAGE_GROUP = 10_000;
/**
 * Up to this many output rows, a chunk keeps one image row per change: 100,000 rows reach a
 * value's 1 GB only where the columns a run writes hold 10 KB a row.
 */
export const UNGROUPED_ROWS = 100_000;
/** The array of an inserted row's `n`-th key column (runs with `imageKeys`). */
export const imageKeyColumn = (n: number): string => `backfill:key:${n}`;

/** Where a run's images go: its table, and the row type its rows are kept as (an empty table's). */
export interface ImageTables {
  table: string;
  rowType: string;
}

export interface CompiledImages {
  /** Creates the run's row type and empty image table (two statements); `temporary` for plan's sample, gone with its transaction. */
  createTables(tables: ImageTables, options?: { temporary?: boolean }): string[];
  /**
   * Before the write, in its transaction: images of every row it will change; each returns one
   * row, `imaged`. `outputRows`, the chunk's, decides whether they are packed in groups (absent: they are).
   */
  capture(tables: ImageTables, bounds: PartitionBounds, range: OutputKeyRange | null, outputRows?: number): Statement[];
  /**
   * The image rows of one chunk (`$1`, its transaction), one SQL row per imaged target row:
   * change, xid, the row's columns. `everyChunk`: of the whole run, without a parameter.
   */
  unpacked(tables: ImageTables, options?: { everyChunk?: boolean }): string;
  /** The columns of an image row that hold images (quoted): the rows, and the key arrays where kept. */
  imageColumns: string[];
}

export function compileBeforeImages(spec: ResolvedSpec, shape: RunShape): CompiledImages {
  const { target, out, keyCols, valueCols, absent, changed, joinInRange, keyInRange, join } = targetJoin(spec, shape);
  const replace = spec.target.mode === 'replace';
  // replace mode keeps whole rows: every target column, named as registered (a column added
  // since then is not the run's to keep)
  const wholeRow = (shape.targetColumns ?? []).map(quoteIdent);
  if (replace && wholeRow.length === 0)
    throw new Error('replace mode keeps before-images of whole rows and needs shape.targetColumns (runs registered before before-images have none)');
  const kept = replace ? wholeRow : [...keyCols, ...valueCols];
  const [change, xid, rows] = [IMAGE_CHANGE, IMAGE_XID, IMAGE_ROWS].map(quoteIdent);
  const keyArrays = shape.imageKeys ? keyCols.map((_, n) => quoteIdent(imageKeyColumn(n))) : [];

  /**
   * Packs `select` (its columns: `kind`, then `kept` in order) into image rows, one per change or
   * of IMAGE_GROUP rows when `grouped`; with key arrays, inserted rows (`i`) as their keys alone.
   * Returns how many rows it imaged.
   *
   * `rangeHolds`, a condition: the chunk's output key range holds target rows. Where it does not
   * (a backfill into a new table, or past its end), every output row is an insert, and its images
   * are the output's keys, read straight from it without meeting the target row by row — a third
   * of the images' cost. One statement either way: the condition is an index probe, run once,
   * and decides which half runs.
   */
  function packed(tables: ImageTables, select: string, values: unknown[], grouped: boolean, rangeHolds?: string): Statement {
    const cols = kept.map((_, i) => `x.c${i}`).join(', ');
    const asRows = `array_agg(ROW(${cols})::${tables.rowType})`;
    // with key arrays, an inserted row (`i`) is kept as its key alone: `x.cN` of each key column
    const [into, aggregates, imaged] =
      keyArrays.length > 0
        ? [
            [change, xid, rows, ...keyArrays],
            [`${asRows} FILTER (WHERE x.kind <> 'i')`, ...keyCols.map((c) => `array_agg(x.c${kept.indexOf(c)}) FILTER (WHERE x.kind = 'i')`)],
            `coalesce(cardinality(${rows}), cardinality(${keyArrays[0]}))`,
          ]
        : [[change, xid, rows], [asRows], `cardinality(${rows})`];
    const from = grouped
      ? `FROM (SELECT s.*, row_number() OVER () - 1 AS n FROM (${select}) s) x GROUP BY x.kind, x.n / ${IMAGE_GROUP}`
      : `FROM (${select}) x${rangeHolds ? ` WHERE ${rangeHolds}` : ''} GROUP BY x.kind`;
    const asImages = `SELECT x.kind, pg_current_xact_id(), ${aggregates.join(', ')} ${from}`;
    const source = rangeHolds
      ? `SELECT 'i'::"char", pg_current_xact_id(), NULL::${tables.rowType}[], ${keyCols.map((c) => `array_agg(o.${c})`).join(', ')} ` +
        `FROM ${out} o WHERE NOT ${rangeHolds} HAVING count(*) > 0 UNION ALL ${asImages}`
      : asImages;
    return {
      text:
        `WITH img AS (INSERT INTO ${tables.table} (${into.join(', ')}) ${source} ` +
        `RETURNING ${imaged} AS n) SELECT coalesce(sum(n), 0)::integer AS imaged FROM img`,
      values,
    };
  }
  const named = (exprs: string[]) => exprs.map((e, i) => `${e} AS c${i}`).join(', ');

  /** The rows the merge or update changes, with their old values (an inserted row's: NULL). */
  function changedRows(tables: ImageTables, update: boolean, range: OutputKeyRange | null, grouped: boolean): Statement {
    const { values, param } = params();
    const on = joinInRange(range, param);
    const kind = update ? `'u'` : `CASE WHEN ${absent} THEN 'i' ELSE 'u' END`;
    const value = (c: string) => (keyCols.includes(c) ? `o.${c}` : valueCols.includes(c) ? `t.${c}` : 'NULL');
    const select =
      `SELECT ${kind}::"char" AS kind, ${named(kept.map(value))} ` +
      (update ? `FROM ${out} o JOIN ${target} t ON ${on} WHERE ${changed}` : `FROM ${out} o LEFT JOIN ${target} t ON ${on} WHERE ${absent} OR ${changed}`);
    // a chunk whose output key range holds no target row yet inserts every output row
    const inRange = update || grouped || keyArrays.length === 0 ? null : keyInRange(range, param);
    return packed(tables, select, values, grouped, inRange ? `EXISTS (SELECT 1 FROM ${target} t WHERE ${inRange})` : undefined);
  }

  return {
    imageColumns: [rows, ...keyArrays],

    createTables(tables, options = {}) {
      const rowTable = `SELECT ${kept.map((c) => `t.${c}`).join(', ')} FROM ${target} t WITH NO DATA`;
      const unqualified = (name: string) => name.replace(/^pg_temp\./, '');
      const createRowType = options.temporary
        ? `CREATE TEMP TABLE ${unqualified(tables.rowType)} ON COMMIT DROP AS ${rowTable}`
        : `CREATE TABLE ${tables.rowType} AS ${rowTable}`;
      if (keyArrays.length === 0) {
        const columns = `${change} "char" NOT NULL, ${xid} xid8 NOT NULL, ${rows} ${tables.rowType}[] NOT NULL`;
        // insert-only until dropped: autovacuum would only re-read it while the run writes
        return [
          createRowType,
          options.temporary
            ? `CREATE TEMP TABLE ${unqualified(tables.table)} (${columns}) ON COMMIT DROP`
            : `CREATE TABLE ${tables.table} (${columns}) WITH (autovacuum_enabled = false)`,
        ];
      }
      // the key arrays typed as the row type's key columns (so as the target's), without
      // spelling a type: made from a query that has them
      const shapeOf =
        `SELECT NULL::"char" AS ${change}, NULL::xid8 AS ${xid}, NULL::${tables.rowType}[] AS ${rows}, ` +
        `${keyCols.map((c, n) => `ARRAY[r.${c}] AS ${keyArrays[n]}`).join(', ')} FROM ${tables.rowType} r WITH NO DATA`;
      return [
        createRowType,
        options.temporary
          ? `CREATE TEMP TABLE ${unqualified(tables.table)} ON COMMIT DROP AS ${shapeOf}`
          : `CREATE TABLE ${tables.table} WITH (autovacuum_enabled = false) AS ${shapeOf}`,
        `ALTER TABLE ${tables.table} ALTER ${change} SET NOT NULL, ALTER ${xid} SET NOT NULL, ` +
          `${keyArrays.map((k) => `ALTER ${k} SET STORAGE EXTERNAL`).join(', ')}, ` +
          // an image row holds rows or keys, never both or neither
          `ADD CHECK ((${rows} IS NULL) <> (${keyArrays[0]} IS NULL))`,
      ];
    },

    capture(tables, bounds, range, outputRows) {
      const grouped = outputRows === undefined || outputRows > UNGROUPED_ROWS;
      switch (spec.target.mode) {
        case 'upsert':
          return [changedRows(tables, false, range, grouped)];
        case 'update':
          return valueCols.length > 0 ? [changedRows(tables, true, range, grouped)] : [];
        case 'replace': {
          // what a replace partition deletes is not bounded by its output: always in groups
          const { values, param } = params();
          const inPartition = targetPartitionScope(spec, shape, bounds, 't', param);
          const select =
            `SELECT 'd'::"char" AS kind, ${named(kept.map((c) => `t.${c}`))} FROM ${target} t ` +
            `WHERE ${inPartition} AND NOT EXISTS (SELECT 1 FROM ${out} o WHERE ${join})`;
          return [packed(tables, select, values, true), changedRows(tables, false, range, grouped)];
        }
      }
    },

    unpacked(tables, options = {}) {
      const ofChunk = options.everyChunk ? 'true' : `i.${xid} = $1::xid8`;
      const asRows = `SELECT i.${change}, i.${xid}, u.* FROM ${tables.table} i CROSS JOIN LATERAL unnest(i.${rows}) u WHERE ${ofChunk}`;
      if (keyArrays.length === 0) return `(${asRows})`;
      // an inserted row's image as a row of the row type: its key, every other column NULL
      const keys = keyCols.map((_, n) => `k${n}`);
      const asRow = `(ROW(${kept.map((c) => (keyCols.includes(c) ? `k.k${keyCols.indexOf(c)}` : 'NULL')).join(', ')})::${tables.rowType}).*`;
      const asKeys =
        `SELECT i.${change}, i.${xid}, ${asRow} FROM ${tables.table} i ` +
        `CROSS JOIN LATERAL unnest(${keyArrays.map((k) => `i.${k}`).join(', ')}) AS k(${keys.join(', ')}) WHERE ${ofChunk} AND i.${rows} IS NULL`;
      return `(${asRows} UNION ALL ${asKeys})`;
    },
  };
}
