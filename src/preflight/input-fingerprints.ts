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
 * own check has already refused names that do not exist. Taken before every partition, so in
 * at most three round trips whatever the transform reads: the relations' catalog facts, their
 * rows, the functions.
 */
export async function fingerprintInputs(
  db: pg.PoolClient | pg.Pool,
  reads: { tables: string[]; functions: string[] },
  exclude: string[],
): Promise<InputFingerprint[]> {
  const relations = await relationFacts(db, [...exclude, ...reads.tables], exclude.length);
  const contents = await relationContents(
    db,
    relations.filter((r) => r.kind !== 'view' && r.kind !== 'foreign table' && r.estimate <= CONTENT_ROW_LIMIT),
  );
  const out: InputFingerprint[] = relations.map((r) => {
    const fingerprint: InputFingerprint = { name: r.name, kind: r.kind, definition: sha256(`${r.columns}\n${r.viewdef ?? ''}`) };
    if (r.kind === 'view' || r.kind === 'foreign table') return { ...fingerprint, uncovered: `a ${r.kind}: its definition is checked, not its rows` };
    const content = contents.get(r.oid);
    if (!content) return { ...fingerprint, uncovered: `about ${Math.round(r.estimate)} rows, over the ${CONTENT_ROW_LIMIT} hashed at each partition` };
    return { ...fingerprint, rows: Number(content.n), content: sha256(content.h) };
  });
  out.push(...(await fingerprintFunctions(db, reads.functions)));
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

interface RelationFacts {
  oid: number;
  name: string;
  kind: InputFingerprint['kind'];
  /** Rows by the planner's estimate; never analyzed, by the size on disk at about 100 bytes a row. */
  estimate: number;
  columns: string;
  viewdef: string | null;
}

/**
 * The catalog facts of the relations `names` resolve to, in the order named, each once, leaving
 * out any that one of the first `excluded` names resolves to.
 */
async function relationFacts(db: pg.PoolClient | pg.Pool, names: string[], excluded: number): Promise<RelationFacts[]> {
  if (names.length === excluded) return [];
  const { rows } = await db.query<{
    ord: string;
    oid: string | null;
    name: string;
    relkind: string;
    estimate: number;
    bytes: string | null;
    columns: string;
    viewdef: string | null;
  }>(
    `SELECT w.ord, c.oid, c.oid::regclass::text AS name, c.relkind, c.reltuples::float8 AS estimate,
            CASE WHEN c.reltuples < 0 THEN pg_total_relation_size(c.oid) END AS bytes,
            (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
               FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END AS viewdef
       FROM unnest($1::text[]) WITH ORDINALITY AS w(name, ord)
       LEFT JOIN pg_class c ON c.oid = to_regclass(w.name)
      ORDER BY w.ord`,
    // names as the catalog has them (the parser folded unquoted ones already): quoted, so none is folded again
    [names.map(quoteTable)],
  );
  const skip = new Set(rows.filter((r) => Number(r.ord) <= excluded && r.oid !== null).map((r) => Number(r.oid)));
  const facts: RelationFacts[] = [];
  for (const r of rows.slice(excluded)) {
    if (r.oid === null || skip.has(Number(r.oid))) continue;
    skip.add(Number(r.oid));
    // never analyzed (-1): the size on disk decides, about 100 bytes a row
    const estimate = r.estimate >= 0 ? r.estimate : Number(r.bytes) / 100;
    facts.push({ oid: Number(r.oid), name: r.name, kind: KINDS[r.relkind] ?? 'table', estimate, columns: r.columns, viewdef: r.viewdef });
  }
  return facts;
}

/** Each relation's row count and an order-independent hash of its rows, in one statement for all of them. */
async function relationContents(db: pg.PoolClient | pg.Pool, relations: RelationFacts[]): Promise<Map<number, { n: string; h: string }>> {
  if (relations.length === 0) return new Map();
  // the names are the catalog's own (regclass output, quoted where they need it)
  const { rows } = await db.query<{ oid: string; n: string; h: string }>(
    relations
      .map((r) => `SELECT ${r.oid}::oid AS oid, count(*) AS n, coalesce(sum(hashtextextended(t::text, 0)::numeric), 0)::text AS h FROM ${r.name} t`)
      .join(' UNION ALL '),
  );
  return new Map(rows.map((r) => [Number(r.oid), { n: r.n, h: r.h }]));
}

/** Every user-defined function (any overload) each written name can mean; built-ins are PostgreSQL's own. */
async function fingerprintFunctions(db: pg.PoolClient | pg.Pool, written: string[]): Promise<InputFingerprint[]> {
  if (written.length === 0) return [];
  const names = written.map((w) => w.split('.'));
  const { rows } = await db.query<{ signature: string; def: string }>(
    `SELECT p.oid::regprocedure::text AS signature,
            CASE WHEN p.prokind = 'a' THEN p.prosrc || ' ' || p.provolatile::text ELSE pg_get_functiondef(p.oid) END AS def
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS w(name, schema, ord)
       JOIN pg_proc p ON p.proname = w.name
       JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND CASE WHEN w.schema IS NULL THEN pg_function_is_visible(p.oid) ELSE n.nspname = w.schema END
      ORDER BY w.ord, 1`,
    [names.map((parts) => parts[parts.length - 1]), names.map((parts) => (parts.length > 1 ? parts[parts.length - 2] : null))],
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
