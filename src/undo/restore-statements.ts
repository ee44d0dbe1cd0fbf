/**
 * The statements of a revert run (docs/undo.md). A revert chunk restores the images of one chunk
 * of the original run — those its transaction took (`backfill:xid`), unpacked to a row each — and puts each row back only
 * while it is still the version that chunk wrote (its `xmin` is the chunk's transaction):
 * compare-and-set, in the statement that restores it. An image's row is then in one of three
 * states: as the run left it (restorable), as it was before the run (restored, by this revert or
 * by someone else), or neither (a conflict: someone changed it since; left alone).
 * Pure, like the rest of the compiler.
 */
import { quoteIdent, quoteTable } from '../db/sql';
import type { ResolvedSpec } from '../specs/resolve';
import { compileBeforeImages, IMAGE_CHANGE, IMAGE_XID, type ImageTables } from './image-statements';
import type { RevertShape, RunShape } from '../compiler/shape';
import type { Statement } from '../compiler/statements';

export interface CompiledRevert {
  /** Restores the restorable rows among the images of the original chunk `xid`; one row: `restored`. */
  restore(xid: string): Statement;
  /** Those images by state: `images`, `before` (as before the run), `after` (as the run left them), `conflicts`. */
  tally(xid: string): Statement;
  /** Their conflicts (`key` as text, `change`): for the ledger only, never Temporal. */
  conflicts(xid: string): Statement;
}

export function compileRevert(spec: ResolvedSpec, shape: RunShape, tables: ImageTables, revert: RevertShape): CompiledRevert {
  const target = quoteTable(spec.target.table);
  const keys = spec.target.key;
  const keyCols = keys.map(quoteIdent);
  const valueCols = shape.outputColumns.filter((c) => !keys.includes(c)).map(quoteIdent);
  const rest = (shape.targetColumns ?? []).filter((c) => !keys.includes(c)).map(quoteIdent);
  const change = `i.${quoteIdent(IMAGE_CHANGE)}`;
  const xid = `i.${quoteIdent(IMAGE_XID)}`;
  const join = keyCols.map((c, n) => `t.${c} = i.${c}${shape.targetKeyCollations?.[n] ? ` COLLATE ${shape.targetKeyCollations[n]}` : ''}`).join(' AND ');
  const present = `t.${keyCols[0]} IS NOT NULL`;
  const same = (a: string[], b: string[]) => (a.length === 0 ? 'true' : `(${a.join(', ')}) IS NOT DISTINCT FROM (${b.join(', ')})`);
  /** Target row t is the version the original chunk wrote: nobody has changed it since. */
  const unchangedSince = `t.xmin = ${xid}::xid`;
  /** Row by row: the target as the run left it — restorable. */
  const asRunLeftIt = `CASE ${change} WHEN 'd' THEN NOT ${present} ELSE ${present} AND ${unchangedSince} END`;
  /** Row by row: the target as it was before the run. */
  const asBefore =
    `CASE ${change} WHEN 'i' THEN NOT ${present} ` +
    `WHEN 'd' THEN ${present} AND ${same(
      rest.map((c) => `t.${c}`),
      rest.map((c) => `i.${c}`),
    )} ` +
    `ELSE ${present} AND ${same(
      valueCols.map((c) => `t.${c}`),
      valueCols.map((c) => `i.${c}`),
    )} END`;
  const keyText = keyCols.length === 1 ? `i.${keyCols[0]}::text` : `row(${keyCols.map((c) => `i.${c}`).join(', ')})::text`;
  /** The chunk's images (`$1`: its transaction), one SQL row per imaged target row. */
  const images = compileBeforeImages(spec, shape).unpacked(tables);
  const withTarget = `FROM ${images} i LEFT JOIN ${target} t ON ${join}`;

  return {
    restore(chunkXid) {
      const steps: [string, string][] = [
        [
          'updated',
          valueCols.length > 0
            ? `UPDATE ${target} t SET ${valueCols.map((v) => `${v} = i.${v}`).join(', ')} FROM img i WHERE ${change} = 'u' AND ${join} AND ${unchangedSince} RETURNING 1`
            : 'SELECT 1 WHERE false',
        ],
        ['inserted', `DELETE FROM ${target} t USING img i WHERE ${change} = 'i' AND ${join} AND ${unchangedSince} RETURNING 1`],
      ];
      if (spec.target.mode === 'replace') {
        const cols = (revert.insertColumns ?? []).map(quoteIdent);
        // identity columns get back the values they had: OVERRIDING SYSTEM VALUE
        steps.push([
          'deleted',
          `INSERT INTO ${target} (${cols.join(', ')}) OVERRIDING SYSTEM VALUE SELECT ${cols.map((c) => `i.${c}`).join(', ')} FROM img i ` +
            `WHERE ${change} = 'd' AND NOT EXISTS (SELECT 1 FROM ${target} t WHERE ${join}) RETURNING 1`,
        ]);
      }
      const counted = steps.map(([name]) => `(SELECT count(*) FROM ${name})`).join(' + ');
      return {
        // every step reads the target as the statement's snapshot had it: they restore disjoint keys
        text:
          `WITH img AS MATERIALIZED (SELECT * FROM ${images} i), ${steps.map(([name, sql]) => `${name} AS (${sql})`).join(', ')} ` +
          `SELECT (${counted})::integer AS restored`,
        values: [chunkXid],
      };
    },

    tally(chunkXid) {
      return {
        text:
          `SELECT count(*)::integer AS images, count(*) FILTER (WHERE ${asBefore})::integer AS before, ` +
          `count(*) FILTER (WHERE ${asRunLeftIt})::integer AS after, count(*) FILTER (WHERE NOT (${asBefore}) AND NOT (${asRunLeftIt}))::integer AS conflicts ${withTarget}`,
        values: [chunkXid],
      };
    },

    conflicts(chunkXid) {
      return {
        text:
          `SELECT ${keyText} AS key, CASE ${change} WHEN 'u' THEN 'updated' WHEN 'i' THEN 'inserted' ELSE 'deleted' END AS change ` +
          `${withTarget} WHERE NOT (${asBefore}) AND NOT (${asRunLeftIt})`,
        values: [chunkXid],
      };
    },
  };
}
