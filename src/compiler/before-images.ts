/**
 * Before-images (docs/undo.md): for every target row a chunk's write is about to change, the
 * values it holds now — taken in the chunk's transaction, just before the write and under the
 * same snapshot, so an image exists exactly when the write committed. A run keeps them in a
 * table of its own, typed like the target (values stay exact: no JSON or text round trip):
 *
 * - the key columns and the columns the run writes (replace mode: every column of the target,
 *   since what it deletes must come back whole);
 * - `backfill:change`: `u` updated (the written columns hold their old values), `i` inserted
 *   (the key alone: undoing it is a delete), `d` deleted by replace mode (the whole old row);
 * - `backfill:xid`: the chunk's transaction, which the chunk log records too. Every row version
 *   the write leaves carries it as its `xmin`, and any later change to the row makes a new
 *   version with another: a revert restores a row only while its `xmin` is still the chunk's,
 *   so it never undoes someone else's write — without keeping a copy of what the run wrote.
 *   (The chunk's transaction has no subtransactions: its writes carry the top-level id.)
 *
 * The colon keeps these names apart from any sane column name; a target that has one anyway
 * is refused when the run is compiled.
 */
import { quoteIdent } from '../db/sql';
import type { PartitionBounds } from '../shared/types';
import type { Spec } from '../specs/schema';
import { params } from './partition-predicate';
import type { RunShape } from './shape';
import type { Statement } from './statements';
import { targetJoin, targetPartitionScope } from './target-join';

export const IMAGE_CHANGE = 'backfill:change';
export const IMAGE_XID = 'backfill:xid';
const RESERVED_PREFIX = 'backfill:';

export interface CompiledImages {
  /** Creates the run's empty image table; `temporary` for plan's sample, gone with its transaction. */
  createTable(table: string, options?: { temporary?: boolean }): string;
  /** Before the write, in its transaction: images of every row it will change (rowCount each). */
  capture(table: string, bounds: PartitionBounds): Statement[];
}

export function compileBeforeImages(spec: Spec, shape: RunShape): CompiledImages {
  const { target, out, keyCols, valueCols, absent, changed, joinWithin, join } = targetJoin(spec, shape);
  const replace = spec.target.mode === 'replace';
  // replace mode keeps whole rows: every target column, named as registered (a column added
  // since then is not the run's to keep, and is never mistaken for one of ours by position)
  const wholeRow = (shape.targetColumns ?? []).map(quoteIdent);
  if (replace && wholeRow.length === 0)
    throw new Error('replace mode keeps before-images of whole rows and needs shape.targetColumns (runs registered before before-images have none)');
  const clash = [...shape.outputColumns, ...(shape.targetColumns ?? [])].find((c) => c.startsWith(RESERVED_PREFIX));
  if (clash) {
    throw new Error(
      `target column ${clash} starts with "${RESERVED_PREFIX}", which before-images use for their own columns; rename it, or set undo: off in the spec`,
    );
  }
  const meta = [IMAGE_CHANGE, IMAGE_XID].map(quoteIdent);
  const xid = 'pg_current_xact_id()';

  /** Images of the rows the merge or update changes: their old values. */
  function changedRows(table: string, update: boolean): Statement {
    const kind = update ? `'u'` : `CASE WHEN ${absent} THEN 'i' ELSE 'u' END`;
    return {
      text:
        `INSERT INTO ${table} (${[...keyCols, ...valueCols, ...meta].join(', ')}) ` +
        `SELECT ${[...keyCols.map((c) => `o.${c}`), ...valueCols.map((c) => `t.${c}`), kind, xid].join(', ')} ` +
        (update
          ? `FROM ${out} o JOIN ${target} t ON ${joinWithin(out, true)} WHERE ${changed}`
          : `FROM ${out} o LEFT JOIN ${target} t ON ${joinWithin(out, true)} WHERE ${absent} OR ${changed}`),
      values: [],
    };
  }

  return {
    createTable(table, options = {}) {
      const columns = (replace ? wholeRow : [...keyCols, ...valueCols]).map((c) => `t.${c}`);
      const metaTyped = [`NULL::"char" AS ${meta[0]}`, `NULL::xid8 AS ${meta[1]}`];
      const select = `SELECT ${[...columns, ...metaTyped].join(', ')} FROM ${target} t WITH NO DATA`;
      // insert-only until dropped: autovacuum would only re-read it while the run writes
      return options.temporary
        ? `CREATE TEMP TABLE ${table} ON COMMIT DROP AS ${select}`
        : `CREATE TABLE ${table} WITH (autovacuum_enabled = false) AS ${select}`;
    },

    capture(table, bounds) {
      switch (spec.target.mode) {
        case 'upsert':
          return [changedRows(table, false)];
        case 'update':
          return valueCols.length > 0 ? [changedRows(table, true)] : [];
        case 'replace': {
          const { values, param } = params();
          const inPartition = targetPartitionScope(spec, shape, bounds, 't', param);
          const deleted = {
            text:
              `INSERT INTO ${table} (${[...wholeRow, ...meta].join(', ')}) SELECT ${wholeRow.map((c) => `t.${c}`).join(', ')}, 'd', ${xid} ` +
              `FROM ${target} t WHERE ${inPartition} AND NOT EXISTS (SELECT 1 FROM ${out} o WHERE ${join})`,
            values,
          };
          return [deleted, changedRows(table, false)];
        }
      }
    },
  };
}
