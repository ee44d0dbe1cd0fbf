/**
 * What the catalog says about a table a spec names: its columns with their types and
 * collations, which of them a cursor can walk, its unique keys and partition key; and, for a
 * name that is not there, the name that was meant. Read inside inspect's rolled-back check.
 */
import type pg from 'pg';
import { caseFoldedMatch, quoteTable } from '../db/sql';

export interface TableInfo {
  columns: Map<string, string>;
  /** Each column's type with domains resolved to the type under them (what bounds and cursors are cast to: a domain's CHECK is no business of a bound). */
  baseTypes: Map<string, string>;
  /** Each collatable column's collation as SQL (`pg_catalog."C"`). */
  collations: Map<string, string>;
  /** Columns in a nondeterministic collation (case- or accent-insensitive): equal values may differ in bytes. */
  nondeterministic: Set<string>;
  /** Columns a keyset cursor can walk: a default btree order on the (base) type, not a floating-point one. */
  walkable: Set<string>;
  notNull: Set<string>;
  /** Column sets of unique, non-partial indexes (including the primary key). */
  uniqueKeys: string[][];
  /** A declaratively partitioned table's partition key columns (empty for any other table). */
  partitionKey: string[];
}

export async function tableInfo(client: pg.PoolClient, table: string): Promise<TableInfo | undefined> {
  const reg = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [quoteTable(table)]);
  const oid = reg.rows[0]?.oid;
  if (!oid) return undefined;
  const cols = await client.query<{
    name: string;
    type: string;
    not_null: boolean;
    collation: string | null;
    deterministic: boolean | null;
    walkable: boolean;
    base_type: string;
  }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
            (SELECT CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) ELSE format_type(a.atttypid, a.atttypmod) END
               FROM pg_type t WHERE t.oid = a.atttypid) AS base_type,
            (SELECT format('%I.%I', n.nspname, c.collname) FROM pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace WHERE c.oid = a.attcollation) AS collation,
            (SELECT c.collisdeterministic FROM pg_collation c WHERE c.oid = a.attcollation) AS deterministic,
            -- a domain walks as its base type; floats sort totally but their text is no key anyone should walk by
            (SELECT EXISTS (SELECT 1 FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod
                             WHERE m.amname = 'btree' AND o.opcdefault AND o.opcintype = b.base)
                    AND b.base NOT IN ('float4'::regtype, 'float8'::regtype)
               FROM (SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END AS base FROM pg_type t WHERE t.oid = a.atttypid) b) AS walkable
       FROM pg_attribute a
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [oid],
  );
  const idx = await client.query<{ cols: string[] }>(
    `SELECT array_agg(a.attname::text ORDER BY k.ord) AS cols
       FROM pg_index i
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE i.indrelid = $1 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
      GROUP BY i.indexrelid`,
    [oid],
  );
  const parts = await client.query<{ cols: string[] }>(
    `SELECT array_agg(a.attname::text ORDER BY k.ord) AS cols
       FROM pg_partitioned_table p
       CROSS JOIN LATERAL unnest(p.partattrs) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.attnum
      WHERE p.partrelid = $1`,
    [oid],
  );
  return {
    partitionKey: parts.rows[0]?.cols ?? [],
    columns: new Map(cols.rows.map((r) => [r.name, r.type])),
    baseTypes: new Map(cols.rows.map((r) => [r.name, r.base_type])),
    collations: new Map(cols.rows.filter((r) => r.collation !== null).map((r) => [r.name, r.collation!])),
    nondeterministic: new Set(cols.rows.filter((r) => r.deterministic === false).map((r) => r.name)),
    walkable: new Set(cols.rows.filter((r) => r.walkable).map((r) => r.name)),
    notNull: new Set(cols.rows.filter((r) => r.not_null).map((r) => r.name)),
    uniqueKeys: idx.rows.map((r) => r.cols),
  };
}

/** A column the table does not have, and the one it has that differs only in case: names are matched exactly. */
export function missingColumn(column: string, table: string, info: TableInfo): string {
  const meant = caseFoldedMatch(column, info.columns.keys());
  if (meant) return `names column ${column}, which ${table} does not have; names are matched exactly as the catalog has them: did you mean ${meant}?`;
  return `names column ${column}, which ${table} does not have; columns: ${[...info.columns.keys()].join(', ')}`;
}

/** For a table that does not exist: the one that differs only in case, if there is one, else `otherwise`. */
export async function tableAdvice(client: pg.PoolClient, table: string, otherwise: string): Promise<string> {
  const [schema, name] = table.includes('.') ? table.split('.', 2) : [undefined, table];
  const { rows } = await client.query<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE lower(c.relname) = lower($2) AND ($1::text IS NULL OR lower(n.nspname) = lower($1)) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
    [schema ?? null, name],
  );
  const meant = caseFoldedMatch(
    table,
    rows.map((r) => (schema === undefined ? r.name : `${r.schema}.${r.name}`)),
  );
  return meant ? `names are matched exactly as the catalog has them: did you mean ${meant}?` : otherwise;
}

/**
 * A key in a case- or accent-insensitive collation: 'A' and 'a' are one key to its index but
 * two values to a cursor's text and to the checks' comparisons, so chunks could skip or repeat
 * rows and a check could call equal rows different. Refused rather than walked approximately.
 */
export function nondeterministicKey(columns: string[], table: string, info: TableInfo): string {
  const which = columns.map((c) => `${c} (${info.collations.get(c)})`).join(', ');
  return (
    `${which} on ${table} ${columns.length === 1 ? 'is' : 'are'} in a nondeterministic collation, where different values compare equal; ` +
    'keyset chunks and row matching need a deterministic one: key on another unique column, or add a unique column in a deterministic collation (e.g. "C") and key on it'
  );
}

/** One partition under a partitioned table, at any depth, as the catalog has it. */
export interface TablePartition {
  /** Qualified, quoted where needed: `public.events_2024_01`. */
  name: string;
  /** Holds rows itself (a leaf), rather than partitions of its own. */
  leaf: boolean;
  /** Its FOR VALUES clause (`DEFAULT` for a default partition). */
  bound: string;
  /** Its whole partition constraint, ancestors' included; null for a lone default partition, which holds every row. */
  constraint: string | null;
}

/** Every partition under `table`, in name order: what native plans are cut from and what a run fingerprints. */
export async function partitionTree(db: pg.Pool | pg.PoolClient, table: string): Promise<TablePartition[]> {
  const { rows } = await db.query<TablePartition>(
    `WITH RECURSIVE tree AS (
       SELECT inhrelid AS oid FROM pg_inherits WHERE inhparent = to_regclass($1)
       UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.oid)
     SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relkind IN ('r', 'f') AS leaf,
            pg_get_expr(c.relpartbound, c.oid) AS bound, pg_get_partition_constraintdef(c.oid) AS constraint
       FROM tree JOIN pg_class c ON c.oid = tree.oid JOIN pg_namespace n ON n.oid = c.relnamespace
      ORDER BY n.nspname, c.relname`,
    [quoteTable(table)],
  );
  return rows;
}
