/**
 * What a SQL transform reads besides its chunk, fingerprinted so that a multi-day run notices
 * when it changes: each table or view it names (its columns and types; a view's definition;
 * for tables up to CONTENT_ROW_LIMIT rows, its row count and an order-independent hash of its
 * rows) and each user-defined function it calls (the hash of its definition). The source and
 * target tables are not inputs in this sense: the run reads the one and writes the other.
 * Taken at registration; checked before each partition (an unaccepted change holds the run).
 */
import type pg from 'pg';
import { quoteTable } from '../db/sql';
import { sha256 } from '../util/hash';

export interface InputFingerprint {
  /** As PostgreSQL names it: `app.fx`, `app.rate_for(text)`. */
  name: string;
  kind: 'table' | 'view' | 'materialized view' | 'foreign table' | 'partitioned table' | 'function';
  /** sha256 of the columns and types, the view's query, or the function's definition. */
  definition: string;
  /** Row count and row hash, for relations small enough to read whole at every check. */
  rows?: number;
  content?: string;
  /** Why the rows are not fingerprinted (too large, a view, a foreign table). */
  uncovered?: string;
}

/** Up to this many rows (by the planner's estimate) a reference table is hashed at every partition. */
export const CONTENT_ROW_LIMIT = 100_000;

const KINDS: Record<string, InputFingerprint['kind']> = { r: 'table', v: 'view', m: 'materialized view', f: 'foreign table', p: 'partitioned table' };

/**
 * Fingerprints the relations and functions named in `reads`, skipping `exclude` (source and
 * target, as written in the spec). A name that resolves to nothing is left out: the transform's
 * own check has already refused names that do not exist.
 */
export async function fingerprintInputs(
  db: pg.PoolClient | pg.Pool,
  reads: { tables: string[]; functions: string[] },
  exclude: string[],
): Promise<InputFingerprint[]> {
  const excluded = new Set<number>();
  for (const name of exclude) {
    const oid = await regclass(db, name);
    if (oid !== undefined) excluded.add(oid);
  }
  const out: InputFingerprint[] = [];
  const seen = new Set<number>();
  for (const name of reads.tables) {
    const oid = await regclass(db, name);
    if (oid === undefined || excluded.has(oid) || seen.has(oid)) continue;
    seen.add(oid);
    out.push(await fingerprintRelation(db, oid));
  }
  for (const name of reads.functions) out.push(...(await fingerprintFunctions(db, name)));
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function regclass(db: pg.PoolClient | pg.Pool, name: string): Promise<number | undefined> {
  // names as the catalog has them (the parser folded unquoted ones already): quoted, so none is folded again
  const { rows } = await db.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [quoteTable(name)]);
  return rows[0].oid === null ? undefined : Number(rows[0].oid);
}

async function fingerprintRelation(db: pg.PoolClient | pg.Pool, oid: number): Promise<InputFingerprint> {
  const { rows } = await db.query<{ name: string; relkind: string; estimate: number; columns: string; viewdef: string | null }>(
    `SELECT c.oid::regclass::text AS name, c.relkind, c.reltuples::float8 AS estimate,
            (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
               FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END AS viewdef
       FROM pg_class c WHERE c.oid = $1`,
    [oid],
  );
  const r = rows[0];
  const kind = KINDS[r.relkind] ?? 'table';
  const fingerprint: InputFingerprint = { name: r.name, kind, definition: sha256(`${r.columns}\n${r.viewdef ?? ''}`) };
  if (kind === 'view' || kind === 'foreign table') return { ...fingerprint, uncovered: `a ${kind}: its definition is checked, not its rows` };
  // never analyzed (-1): the size on disk decides, about 100 bytes a row
  const estimate = r.estimate >= 0 ? r.estimate : await sizeEstimate(db, oid);
  if (estimate > CONTENT_ROW_LIMIT)
    return { ...fingerprint, uncovered: `about ${Math.round(estimate)} rows, over the ${CONTENT_ROW_LIMIT} hashed at each partition` };
  const { rows: content } = await db.query<{ n: string; h: string }>(
    `SELECT count(*) AS n, coalesce(sum(hashtextextended(t::text, 0)::numeric), 0)::text AS h FROM ${r.name} t`,
  );
  return { ...fingerprint, rows: Number(content[0].n), content: sha256(content[0].h) };
}

async function sizeEstimate(db: pg.PoolClient | pg.Pool, oid: number): Promise<number> {
  const { rows } = await db.query<{ bytes: string }>('SELECT pg_total_relation_size($1) AS bytes', [oid]);
  return Number(rows[0].bytes) / 100;
}

/** Every user-defined function (any overload) a written name can mean; built-ins are PostgreSQL's own. */
async function fingerprintFunctions(db: pg.PoolClient | pg.Pool, written: string): Promise<InputFingerprint[]> {
  const parts = written.split('.');
  const name = parts.pop()!;
  const schema = parts.pop();
  const { rows } = await db.query<{ signature: string; def: string }>(
    `SELECT p.oid::regprocedure::text AS signature,
            CASE WHEN p.prokind = 'a' THEN p.prosrc || ' ' || p.provolatile::text ELSE pg_get_functiondef(p.oid) END AS def
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE p.proname = $1
        AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND CASE WHEN $2::text IS NULL THEN pg_function_is_visible(p.oid) ELSE n.nspname = $2 END
      ORDER BY 1`,
    [name, schema ?? null],
  );
  return rows.map((r) => ({ name: r.signature, kind: 'function' as const, definition: sha256(r.def) }));
}

/** What changed between two fingerprints of the same inputs, one phrase each; empty when nothing did. */
export function inputChanges(before: readonly InputFingerprint[], now: readonly InputFingerprint[], since = 'when the run started'): string[] {
  const current = new Map(now.map((f) => [f.name, f]));
  const changes: string[] = [];
  for (const was of before) {
    const is = current.get(was.name);
    if (!is) {
      changes.push(`${was.kind} ${was.name} no longer exists`);
      continue;
    }
    if (is.definition !== was.definition) changes.push(`${was.kind} ${was.name} has a new ${was.kind === 'function' ? 'definition' : 'shape'}`);
    else if (was.rows !== undefined && is.rows === undefined) changes.push(`${was.kind} ${was.name} grew past ${CONTENT_ROW_LIMIT} rows (${is.uncovered})`);
    else if (is.rows !== was.rows) changes.push(`${was.kind} ${was.name} has ${is.rows} rows, ${was.rows} ${since}`);
    else if (is.content !== was.content) changes.push(`${was.kind} ${was.name} has rows with other values`);
  }
  const known = new Set(before.map((f) => f.name));
  for (const f of now) if (!known.has(f.name)) changes.push(`${f.kind} ${f.name} appeared (an overload or a shadowing relation)`);
  return changes;
}
