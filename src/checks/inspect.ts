/**
 * Checks a spec against the database before anything runs, and reads the RunShape the
 * run is compiled against. Every check runs inside a transaction that is rolled back,
 * with EXPLAIN instead of execution, so checking writes nothing. Problems name the
 * spec field, the value, what the database said, and the fix.
 */
import type pg from 'pg';
import { describePgError } from '../db/errors';
import { caseFoldedMatch, pasteableName, quoteIdent, quoteTable } from '../db/sql';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import { parseInterval, sourceKeyColumns, type Spec } from '../specs/schema';
import { loadTransformModule } from '../transforms/load-module';
import type { RunShape } from '../compiler/shape';
import { CHECK_TIMEOUT_MS, inReadOnlyCheck, querySingle } from '../db/session';
import { compileRun, stripTrailingSemicolons } from '../compiler/statements';

const INTEGER_TYPES = ['smallint', 'integer', 'bigint'];
const TIME_TYPES = ['timestamp with time zone', 'timestamp without time zone', 'date'];

/** A type without its modifier: `timestamp(3) without time zone` -> `timestamp without time zone`; the column's own type (precision kept) is what statements cast to. */
export function baseType(type: string): string {
  return type.replace(/\([\d,\s]+\)/, '');
}

export type InspectResult = { ok: true; shape: RunShape } | { ok: false; problems: SpecProblem[] };

interface TableInfo {
  columns: Map<string, string>;
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

async function tableInfo(client: pg.PoolClient, table: string): Promise<TableInfo | undefined> {
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
  }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
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
    collations: new Map(cols.rows.filter((r) => r.collation !== null).map((r) => [r.name, r.collation!])),
    nondeterministic: new Set(cols.rows.filter((r) => r.deterministic === false).map((r) => r.name)),
    walkable: new Set(cols.rows.filter((r) => r.walkable).map((r) => r.name)),
    notNull: new Set(cols.rows.filter((r) => r.not_null).map((r) => r.name)),
    uniqueKeys: idx.rows.map((r) => r.cols),
  };
}

/** A column the table does not have, and the one it has that differs only in case: names are matched exactly. */
function missingColumn(column: string, table: string, info: TableInfo): string {
  const meant = caseFoldedMatch(column, info.columns.keys());
  if (meant) return `names column ${column}, which ${table} does not have; names are matched exactly as the catalog has them: did you mean ${meant}?`;
  return `names column ${column}, which ${table} does not have; columns: ${[...info.columns.keys()].join(', ')}`;
}

/** For a table that does not exist: the one that differs only in case, if there is one, else `otherwise`. */
async function tableAdvice(client: pg.PoolClient, table: string, otherwise: string): Promise<string> {
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

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/**
 * A key in a case- or accent-insensitive collation: 'A' and 'a' are one key to its index but
 * two values to a cursor's text and to the checks' comparisons, so chunks could skip or repeat
 * rows and a check could call equal rows different. Refused rather than walked approximately.
 */
function nondeterministicKey(columns: string[], table: string, info: TableInfo): string {
  const which = columns.map((c) => `${c} (${info.collations.get(c)})`).join(', ');
  return (
    `${which} on ${table} ${columns.length === 1 ? 'is' : 'are'} in a nondeterministic collation, where different values compare equal; ` +
    'keyset chunks and row matching need a deterministic one: key on another unique column, or add a unique column in a deterministic collation (e.g. "C") and key on it'
  );
}

/** Keyset chunks need the key's columns to identify one row: some unique index covers no column outside them. */
function keyIsUnique(key: string[], info: TableInfo): boolean {
  return info.uniqueKeys.some((k) => k.every((c) => key.includes(c)));
}

/** Why `key` cannot walk `table`, and the key (or index) that would. */
function notUniqueAdvice(key: string[], table: string, info: TableInfo): string {
  const named = key.length === 1 ? key[0] : `(${key.join(', ')})`;
  const wider = info.uniqueKeys.filter((k) => key.every((c) => k.includes(c))).sort((a, b) => a.length - b.length)[0];
  const asSpec = (cols: string[]) => (cols.length === 1 ? cols[0] : `[${cols.join(', ')}]`);
  if (wider) return `${named} is not unique on ${table}, but (${wider.join(', ')}) is: set source.key: ${asSpec(wider)}`;
  const index = `CREATE UNIQUE INDEX ON ${pasteableName(table)} (${key.map(pasteableName).join(', ')})`;
  const missing = info.partitionKey.filter((c) => !key.includes(c));
  if (missing.length > 0) {
    // PostgreSQL refuses a unique index on a partitioned table that leaves out its partition key
    return (
      `${named} has no unique index on ${table}, a partitioned table whose unique indexes must include its partition key (${info.partitionKey.join(', ')}); ` +
      `name a unique key that includes it (source.key: ${asSpec([...key, ...missing])}), with its index if it has none: CREATE UNIQUE INDEX ON ${pasteableName(table)} (${[...key, ...missing].map(pasteableName).join(', ')})`
    );
  }
  return `${named} has no unique index on ${table}; keyset chunks need one: ${index}`;
}

export async function inspectSpec(pool: pg.Pool, spec: Spec, transform: FrozenTransform): Promise<InspectResult> {
  // read-only, time-limited and always rolled back; the output-table check below makes the
  // one exception it needs (a temp table) in a transaction of its own, rolled back as well
  return inReadOnlyCheck(pool, (client) => inspectWith(client, spec, transform));
}

async function inspectWith(client: pg.PoolClient, spec: Spec, transform: FrozenTransform): Promise<InspectResult> {
  const problems: SpecProblem[] = [];
  const problem = (path: string, message: string) => problems.push({ path, message });

  const version = Number((await client.query<{ v: string }>('SHOW server_version_num')).rows[0].v);
  if (version < 150000) {
    problem('database', `points at PostgreSQL ${Math.floor(version / 10000)}; backfill needs PostgreSQL 15 or newer (it writes with MERGE)`);
    return { ok: false, problems };
  }

  const source = await tableInfo(client, spec.source.table);
  const target = await tableInfo(client, spec.target.table);
  if (!source)
    problem(
      'source.table',
      `names ${spec.source.table}, which does not exist; ${await tableAdvice(client, spec.source.table, 'check the name and its schema')}`,
    );
  if (!target)
    problem(
      'target.table',
      `names ${spec.target.table}, which does not exist; ${await tableAdvice(client, spec.target.table, 'create it first (backfill never creates tables)')}`,
    );
  if (/^backfill\./i.test(spec.target.table)) problem('target.table', 'is in the backfill schema, which holds the ledger; write somewhere else');
  if (!source || !target) return { ok: false, problems };

  const keyColumns = sourceKeyColumns(spec.source);
  const keyTypes = keyColumns.map((k) => source.columns.get(k));
  const nullable = keyColumns.filter((k) => !source.notNull.has(k));
  if (new Set(keyColumns).size !== keyColumns.length) {
    problem('source.key', `names a column twice (${keyColumns.join(', ')}); list each key column once`);
  } else if (keyTypes.some((type) => !type)) {
    for (const k of keyColumns.filter((_, i) => !keyTypes[i])) problem('source.key', missingColumn(k, spec.source.table, source));
  } else if (keyColumns.some((k) => !source.walkable.has(k))) {
    for (const k of keyColumns.filter((c) => !source.walkable.has(c))) {
      problem(
        'source.key',
        `${k} is ${source.columns.get(k)}, which keyset chunks cannot walk (${/^(real|double precision)/.test(source.columns.get(k)!) ? 'a floating-point key is approximate' : 'the type has no total sort order'}); ` +
          'key on a unique column of an integer, numeric, text, uuid, date or timestamp type instead',
      );
    }
  } else if (keyColumns.some((k) => source.nondeterministic.has(k))) {
    problem(
      'source.key',
      nondeterministicKey(
        keyColumns.filter((k) => source.nondeterministic.has(k)),
        spec.source.table,
        source,
      ),
    );
  } else if (!keyIsUnique(keyColumns, source)) {
    problem('source.key', notUniqueAdvice(keyColumns, spec.source.table, source));
  } else if (nullable.length > 0 && (await hasNullKeys(client, spec, nullable))) {
    // a unique index admits any number of NULLs, and a keyset cursor can never pass one
    const isNull = nullable.map((k) => `${k} IS NOT NULL`).join(' AND ');
    problem(
      'source.key',
      `${nullable.join(', ')} ${nullable.length === 1 ? 'is' : 'are'} NULL in some rows in scope, and keyset chunks cannot walk NULL keys (those rows would never be read); ` +
        `exclude them with source.where (${isNull}), or give them keys and add NOT NULL`,
    );
  }

  const partitionColumnType = source.columns.get(spec.partition.column);
  if (!partitionColumnType) {
    problem('partition.column', missingColumn(spec.partition.column, spec.source.table, source));
  } else if (spec.partition.by === 'range' && !INTEGER_TYPES.includes(baseType(partitionColumnType))) {
    problem(
      'partition.column',
      `${spec.partition.column} is ${partitionColumnType}; by: range needs an integer column (use by: time for timestamps, by: list otherwise)`,
    );
  } else if (spec.partition.by === 'time' && !TIME_TYPES.includes(baseType(partitionColumnType))) {
    problem('partition.column', `${spec.partition.column} is ${partitionColumnType}; by: time needs a timestamp or date column`);
  }

  for (const k of spec.target.key) {
    if (!target.columns.has(k)) problem('target.key', missingColumn(k, spec.target.table, target));
  }
  const looseTargetKeys = spec.target.key.filter((k) => target.nondeterministic.has(k));
  if (looseTargetKeys.length > 0) problem('target.key', nondeterministicKey(looseTargetKeys, spec.target.table, target));
  if (spec.target.key.every((k) => target.columns.has(k)) && !target.uniqueKeys.some((u) => sameSet(u, spec.target.key))) {
    problem(
      'target.key',
      `(${spec.target.key.join(', ')}) has no unique index on ${spec.target.table}; writes match rows by it: CREATE UNIQUE INDEX ON ${pasteableName(spec.target.table)} (${spec.target.key.map(pasteableName).join(', ')})`,
    );
  }
  let targetPartitionColumnType: string | undefined;
  if (spec.target.mode === 'replace') {
    targetPartitionColumnType = target.columns.get(spec.target.partitionColumn!);
    if (!targetPartitionColumnType) {
      problem('target.partitionColumn', `names column ${spec.target.partitionColumn}, which ${spec.target.table} does not have`);
    } else if (
      spec.partition.by === 'time' &&
      targetPartitionColumnType === 'date' &&
      ['minute', 'hour'].includes(parseInterval(spec.partition.size)?.unit ?? '')
    ) {
      // a day's row would be computed from a fraction of the day, by each partition in turn
      problem(
        'partition.size',
        `is ${spec.partition.size}, but target.partitionColumn ${spec.target.partitionColumn} is a date: in replace mode each partition must cover whole days; use size: "1 day" (or weeks, months)`,
      );
    }
  }

  if (spec.source.where) {
    const err = await explainError(client, `SELECT 1 FROM ${quoteTable(spec.source.table)} s WHERE (${spec.source.where}\n)`);
    if (err) problem('source.where', `does not compile against ${spec.source.table}: ${err}; it is a SQL condition on the source rows`);
  }
  const guards = spec.limits.guards;
  for (const [path, sql] of [
    ...(guards?.probeMs ? [['limits.guards.probeMs.sql', guards.probeMs.sql]] : []),
    ...(guards?.custom ?? []).map((g, i) => [`limits.guards.custom.${i}.sql`, `SELECT (${g.sql}\n)`]),
  ]) {
    const err = await explainError(client, sql);
    if (err) problem(path, `does not compile: ${err}; a guard is a query returning one number`);
  }
  if (problems.length > 0) return { ok: false, problems };

  let outputColumns: string[];
  if (transform.kind === 'sql') {
    // parsed already (spec-sql.ts): one SELECT that reads `chunk`
    const sql = stripTrailingSemicolons(spec.transform.sql!);
    const described = await describeTransform(client, spec, sql);
    if ('error' in described) {
      problem('transform.sql', `does not compile: ${described.error}`);
      return { ok: false, problems };
    }
    outputColumns = described.columns;
  } else {
    try {
      const { module, codeHash } = loadTransformModule(transform.modulePath!);
      if (codeHash !== transform.codeHash) {
        problem(
          'transform.module',
          `bundles to code ${codeHash.slice(0, 12)} here, not the ${transform.codeHash.slice(0, 12)} it was frozen with: the module or a file it imports changed meanwhile or differs on this machine; run the command again with the same sources`,
        );
      }
      if (module.version !== undefined && module.version !== spec.transform.version) {
        problem('transform.version', `is ${spec.transform.version} but the module says version ${module.version}; make them agree`);
      }
      for (const c of module.reads ?? []) {
        if (!source.columns.has(c)) problem('transform.module', `reads column ${c}, which ${spec.source.table} does not have`);
      }
      outputColumns = module.columns;
    } catch (err) {
      problem('transform.module', `cannot be loaded: ${(err as Error).message}`);
      return { ok: false, problems };
    }
  }

  const duplicates = outputColumns.filter((c, i) => outputColumns.indexOf(c) !== i);
  if (duplicates.length > 0) problem('transform', `outputs column ${duplicates[0]} more than once; alias the columns uniquely`);
  const missing = outputColumns.filter((c) => !target.columns.has(c));
  if (missing.length > 0) {
    problem(
      'transform',
      `outputs ${missing.join(', ')}, which ${spec.target.table} does not have; output only target columns (it has ${[...target.columns.keys()].join(', ')})`,
    );
  }
  const keyMissing = spec.target.key.filter((k) => !outputColumns.includes(k));
  if (keyMissing.length > 0) problem('transform', `does not output target.key column ${keyMissing.join(', ')}; writes match rows by it, so select it`);
  if (spec.target.mode === 'replace' && !outputColumns.includes(spec.target.partitionColumn!)) {
    problem('transform', `does not output target.partitionColumn ${spec.target.partitionColumn}; replace mode needs it to know each row's partition`);
  }
  if (problems.length > 0) return { ok: false, problems };

  const { rows: rewrites } = await client.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1) AND NOT tgisinternal)
          + (SELECT count(*) FROM pg_rewrite WHERE ev_class = to_regclass($1) AND rulename <> '_RETURN') AS n`,
    [quoteTable(spec.target.table)],
  );
  const shape: RunShape = {
    targetRewrites: Number(rewrites[0].n) > 0,
    keyType: keyTypes[0]!,
    ...(keyColumns.length > 1 ? { keyTypes: keyTypes as string[] } : {}),
    partitionColumnType: partitionColumnType!,
    outputColumns,
    targetKeyType: target.columns.get(spec.target.key[0]),
    targetKeyCollations: spec.target.key.map((k) => target.collations.get(k) ?? null),
    // a range partition on the key's first column is walked in key order: its index serves both
    chunkOrder: spec.partition.by === 'time' || (spec.partition.by === 'range' && spec.partition.column !== keyColumns[0]) ? 'column-key' : 'key',
    targetPartitionColumnType,
  };
  // the real statements, planned but not run: type mismatches between output and target surface here.
  // Their temp output table cannot be created read-only: a new transaction creates it, then turns read-only
  const compiled = compileRun(spec, shape);
  await client.query(`ROLLBACK; BEGIN; SET LOCAL statement_timeout = ${CHECK_TIMEOUT_MS}`);
  const createErr = await explainError(client, compiled.createOutputTable, false);
  await client.query('SET LOCAL transaction_read_only = on');
  if (createErr) problem('target.table', `cannot hold the transform's output: ${createErr}`);
  if (transform.kind === 'sql') {
    const fill = compiled.fillFromSql({ kind: 'null', column: spec.partition.column }, null, null);
    const err = await explainError(client, fill.text.replace(/\$\d+::/g, 'NULL::'));
    if (err) problem('transform.sql', `output does not fit ${spec.target.table}: ${err}; cast the column in the SELECT to the target's type`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, shape };
}

async function hasNullKeys(client: pg.PoolClient, spec: Spec, columns: string[]): Promise<boolean> {
  const where = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
  await client.query('SAVEPOINT null_keys');
  try {
    const { rows } = await querySingle<{ e: boolean }>(
      client,
      `SELECT EXISTS (SELECT 1 FROM ${quoteTable(spec.source.table)} s WHERE (${columns.map((c) => `s.${quoteIdent(c)} IS NULL`).join(' OR ')})${where}) AS e`,
    );
    await client.query('RELEASE SAVEPOINT null_keys');
    return rows[0].e;
  } catch {
    // a where filter that does not compile is reported by its own check below
    await client.query('ROLLBACK TO SAVEPOINT null_keys');
    return false;
  }
}

async function explainError(client: pg.PoolClient, sql: string, explain = true): Promise<string | undefined> {
  await client.query('SAVEPOINT inspect');
  try {
    await querySingle(client, explain ? `EXPLAIN ${sql}` : sql);
    await client.query('RELEASE SAVEPOINT inspect');
    return undefined;
  } catch (err) {
    await client.query('ROLLBACK TO SAVEPOINT inspect');
    return describePgError(err);
  }
}

async function describeTransform(client: pg.PoolClient, spec: Spec, sql: string): Promise<{ columns: string[] } | { error: string }> {
  await client.query('SAVEPOINT describe');
  try {
    const res = await querySingle(client, `WITH chunk AS (SELECT s.* FROM ${quoteTable(spec.source.table)} s WHERE false) SELECT * FROM (${sql}\n) t LIMIT 0`);
    await client.query('RELEASE SAVEPOINT describe');
    return { columns: res.fields.map((f) => f.name) };
  } catch (err) {
    await client.query('ROLLBACK TO SAVEPOINT describe');
    return { error: describePgError(err) };
  }
}
