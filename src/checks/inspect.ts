/**
 * Checks a spec against the database before anything runs, and reads the RunShape the
 * run is compiled against. Every check runs inside a transaction that is rolled back,
 * with EXPLAIN instead of execution, so checking writes nothing. Problems name the
 * spec field, the value, what the database said, and the fix.
 */
import type pg from 'pg';
import { describePgError } from '../db/errors';
import { pasteableName, quoteTable } from '../db/sql';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import { undoKeep, type ResolvedSpec } from '../specs/resolve';
import { compileBeforeImages } from '../compiler/before-images';
import { loadTransformModule } from '../transforms/load-module';
import type { RunShape } from '../compiler/shape';
import { CHECK_TIMEOUT_MS, inReadOnlyCheck, querySingle } from '../db/session';
import { compileRun, stripTrailingSemicolons } from '../compiler/statements';
import { sourceKeyProblems } from './source-key';
import { missingColumn, nondeterministicKey, tableAdvice, tableInfo } from './table-info';

const INTEGER_TYPES = ['smallint', 'integer', 'bigint'];

/** Integer types of every width, and numeric without a fraction (`numeric(20,0)`): whole-number ranges. */
function isIntegral(type: string): boolean {
  return INTEGER_TYPES.includes(type) || /^numeric\(\d+,\s*0\)$/.test(type);
}
const TIME_TYPES = ['timestamp with time zone', 'timestamp without time zone', 'date'];

/** A type without its modifier: `timestamp(3) without time zone` -> `timestamp without time zone`; the column's own type (precision kept) is what statements cast to. */
export function baseType(type: string): string {
  return type.replace(/\([\d,\s]+\)/, '');
}

export type InspectResult = { ok: true; shape: RunShape } | { ok: false; problems: SpecProblem[] };

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export async function inspectSpec(pool: pg.Pool, spec: ResolvedSpec, transform: FrozenTransform): Promise<InspectResult> {
  // read-only, time-limited and always rolled back; the output-table check below makes the
  // one exception it needs (a temp table) in a transaction of its own, rolled back as well
  return inReadOnlyCheck(pool, (client) => inspectWith(client, spec, transform));
}

async function inspectWith(client: pg.PoolClient, spec: ResolvedSpec, transform: FrozenTransform): Promise<InspectResult> {
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

  const keyColumns = spec.source.key;
  const keyTypes = keyColumns.map((k) => source.baseTypes.get(k));
  for (const message of await sourceKeyProblems(client, spec, source)) problem('source.key', message);

  const partitionColumnType = source.baseTypes.get(spec.partition.column);
  if (!partitionColumnType) {
    problem('partition.column', missingColumn(spec.partition.column, spec.source.table, source));
  } else if (spec.partition.by === 'range' && spec.partition.size !== undefined && !isIntegral(partitionColumnType)) {
    problem(
      'partition.column',
      `${spec.partition.column} is ${partitionColumnType}; by: range with size needs an integer column (use count: N for ranges of about equal rows on any orderable column, by: time for timestamps)`,
    );
  } else if (spec.partition.by === 'range' && !source.walkable.has(spec.partition.column)) {
    problem(
      'partition.column',
      `${spec.partition.column} is ${partitionColumnType}, which has no total sort order to cut ranges on; partition by another column`,
    );
  } else if (spec.partition.by === 'time' && !TIME_TYPES.includes(baseType(partitionColumnType))) {
    problem('partition.column', `${spec.partition.column} is ${partitionColumnType}; by: time needs a timestamp or date column`);
  }
  if (spec.partition.by === 'native') {
    if (source.partitionKey.length === 0) {
      problem('partition.by', `is native, but ${spec.source.table} is not a partitioned table; partition by range, time or list`);
    } else if (source.partitionKey.length > 1) {
      problem(
        'partition.by',
        `is native, which takes a table partitioned on one column; ${spec.source.table} is partitioned on (${source.partitionKey.join(', ')}): ` +
          `partition by time or range (count: N) on ${source.partitionKey[0]} instead`,
      );
    } else if (source.partitionKey[0] !== spec.partition.column) {
      problem('partition.column', `must be ${spec.source.table}'s partition key: ${source.partitionKey[0]}`);
    }
    if (spec.target.mode === 'replace')
      problem('partition.by', 'is native, which replace mode does not take: replace needs bounds on the target; partition by range or time');
  }
  const zone = spec.partition.by === 'time' ? spec.partition.timeZone : undefined;
  if (zone && !(await client.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1) AS e', [zone])).rows[0].e) {
    problem('partition.timeZone', `is ${zone}, which this PostgreSQL does not know (pg_timezone_names); use a zone name it lists`);
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
    } else if (spec.partition.by === 'time' && targetPartitionColumnType === 'date' && ['minute', 'hour'].includes(spec.partition.interval.unit)) {
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
    // a leaf holds only its own rows: walking the key reads nothing twice
    chunkOrder: spec.partition.by === 'time' || (spec.partition.by === 'range' && spec.partition.column !== keyColumns[0]) ? 'column-key' : 'key',
    targetPartitionColumnType,
    ...(spec.target.mode === 'replace' ? { targetColumns: [...target.columns.keys()] } : {}),
  };
  // the real statements, planned but not run: type mismatches between output and target surface here.
  // Their temp output table cannot be created read-only: a new transaction creates it, then turns read-only
  const compiled = compileRun(spec, shape);
  await client.query(`ROLLBACK; BEGIN; SET LOCAL statement_timeout = ${CHECK_TIMEOUT_MS}`);
  const createErr = await explainError(client, compiled.createOutputTable, false);
  if (createErr) problem('target.table', `cannot hold the transform's output: ${createErr}`);
  if (undoKeep(spec) !== null) for (const message of await beforeImageProblems(client, spec, shape)) problem('undo', message);
  await client.query('SET LOCAL transaction_read_only = on');
  if (transform.kind === 'sql') {
    const fill = compiled.fillFromSql({ kind: 'null', column: spec.partition.column }, null, null);
    const err = await explainError(client, fill.text.replace(/\$\d+::/g, 'NULL::'));
    if (err) problem('transform.sql', `output does not fit ${spec.target.table}: ${err}; cast the column in the SELECT to the target's type`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, shape };
}

/**
 * A run that keeps before-images creates a table of them when it registers: the target's
 * columns must leave room for the images' own, and the role running the chunks must be allowed
 * to create it (once the ledger is migrated; registration migrates it first).
 */
async function beforeImageProblems(client: pg.PoolClient, spec: ResolvedSpec, shape: RunShape): Promise<string[]> {
  let ddl: string[];
  try {
    ddl = compileBeforeImages(spec, shape).createTables(
      { table: 'pg_temp.backfill_images_check', rowType: 'pg_temp.backfill_images_check_row' },
      { temporary: true },
    );
  } catch (err) {
    return [(err as Error).message];
  }
  let err: string | undefined;
  for (const statement of ddl) err ??= await explainError(client, statement, false);
  if (err) return [`before-images of ${spec.target.table} cannot be kept: ${err}; or set undo: off`];
  const { rows } = await client.query<{ allowed: boolean | null }>(
    `SELECT CASE WHEN to_regnamespace('backfill_undo') IS NULL THEN NULL ELSE has_schema_privilege('backfill_undo', 'CREATE') END AS allowed`,
  );
  if (rows[0].allowed === false) {
    return [
      `keeps before-images (docs/undo.md), which needs CREATE on schema backfill_undo for ${await currentRole(client)}: GRANT USAGE, CREATE ON SCHEMA backfill_undo TO that role (docs/security.md), or set undo: off`,
    ];
  }
  return [];
}

async function currentRole(client: pg.PoolClient): Promise<string> {
  return (await client.query<{ r: string }>('SELECT current_user::text AS r')).rows[0].r;
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

async function describeTransform(client: pg.PoolClient, spec: ResolvedSpec, sql: string): Promise<{ columns: string[] } | { error: string }> {
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
