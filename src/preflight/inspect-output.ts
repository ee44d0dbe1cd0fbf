/**
 * The transform's output held against the target, and the shape a run is compiled against:
 * the output's columns (a SQL transform described on an empty chunk, a module loaded as it was
 * frozen), then the real statements — the output table, the before-images, the fill — planned
 * against that shape. Part of inspect.ts.
 */
import type pg from 'pg';
import { compileBeforeImages } from '../undo/image-statements';
import type { RunShape } from '../compiler/shape';
import { compileRun, stripTrailingSemicolons } from '../compiler/statements';
import { quoteTable } from '../db/sql';
import { CHECK_TIMEOUT_MS } from '../db/session';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import { undoKeep, type ResolvedSpec } from '../specs/resolve';
import { loadTransformModule } from '../transforms/load-module';
import { describeTransform, explainError } from './explain';
import type { TableInfo } from './table-info';

/** The columns the transform outputs (undefined when it cannot say), and what is wrong with it. */
export async function transformOutput(
  client: pg.PoolClient,
  spec: ResolvedSpec,
  transform: FrozenTransform,
  source: TableInfo,
): Promise<{ columns?: string[]; problems: SpecProblem[] }> {
  if (transform.kind === 'sql') {
    // parsed already (spec-sql.ts): one SELECT that reads `chunk`
    const described = await describeTransform(client, spec, stripTrailingSemicolons(spec.transform.sql!));
    if ('error' in described) return { problems: [{ path: 'transform.sql', message: `does not compile: ${described.error}` }] };
    return { columns: described.columns, problems: [] };
  }
  const problems: SpecProblem[] = [];
  try {
    const { module, codeHash } = loadTransformModule(transform.modulePath!);
    if (codeHash !== transform.codeHash) {
      problems.push({
        path: 'transform.module',
        message: `bundles to code ${codeHash.slice(0, 12)} here, not the ${transform.codeHash.slice(0, 12)} it was frozen with: the module or a file it imports changed meanwhile or differs on this machine; run the command again with the same sources`,
      });
    }
    if (module.version !== undefined && module.version !== spec.transform.version) {
      problems.push({ path: 'transform.version', message: `is ${spec.transform.version} but the module says version ${module.version}; make them agree` });
    }
    for (const c of module.reads ?? []) {
      if (!source.columns.has(c)) problems.push({ path: 'transform.module', message: `reads column ${c}, which ${spec.source.table} does not have` });
    }
    return { columns: module.columns, problems };
  } catch (err) {
    return { problems: [...problems, { path: 'transform.module', message: `cannot be loaded: ${(err as Error).message}` }] };
  }
}

/** Output columns unique, all in the target, target.key (and replace mode's partition column) among them. */
export function outputProblems(spec: ResolvedSpec, outputColumns: string[], target: TableInfo): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const problem = (message: string) => problems.push({ path: 'transform', message });
  const duplicates = outputColumns.filter((c, i) => outputColumns.indexOf(c) !== i);
  if (duplicates.length > 0) problem(`outputs column ${duplicates[0]} more than once; alias the columns uniquely`);
  const missing = outputColumns.filter((c) => !target.columns.has(c));
  if (missing.length > 0)
    problem(
      `outputs ${missing.join(', ')}, which ${spec.target.table} does not have; output only target columns (it has ${[...target.columns.keys()].join(', ')})`,
    );
  const keyMissing = spec.target.key.filter((k) => !outputColumns.includes(k));
  if (keyMissing.length > 0) problem(`does not output target.key column ${keyMissing.join(', ')}; writes match rows by it, so select it`);
  if (spec.target.mode === 'replace' && !outputColumns.includes(spec.target.partitionColumn!))
    problem(`does not output target.partitionColumn ${spec.target.partitionColumn}; replace mode needs it to know each row's partition`);
  return problems;
}

/** The catalog facts the run is compiled against. */
export async function readShape(
  client: pg.PoolClient,
  spec: ResolvedSpec,
  { source, target }: { source: TableInfo; target: TableInfo },
  outputColumns: string[],
): Promise<RunShape> {
  const keyColumns = spec.source.key;
  const keyTypes = keyColumns.map((k) => source.baseTypes.get(k)!);
  const { rows: rewrites } = await client.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1) AND NOT tgisinternal)
          + (SELECT count(*) FROM pg_rewrite WHERE ev_class = to_regclass($1) AND rulename <> '_RETURN') AS n`,
    [quoteTable(spec.target.table)],
  );
  // an array-typed key would make its image arrays arrays of arrays, which must be rectangular
  // (a domain's typcategory is its base type's)
  const { rows: arrayKeys } = await client.query<{ n: number }>(
    `SELECT count(*)::integer AS n FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
      WHERE a.attrelid = to_regclass($1) AND a.attname = ANY($2::text[]) AND ty.typcategory = 'A'`,
    [quoteTable(spec.target.table), spec.target.key],
  );
  return {
    targetRewrites: Number(rewrites[0].n) > 0,
    imageKeys: arrayKeys[0].n === 0,
    keyType: keyTypes[0],
    ...(keyColumns.length > 1 ? { keyTypes } : {}),
    partitionColumnType: source.baseTypes.get(spec.partition.column)!,
    outputColumns,
    targetKeyType: target.columns.get(spec.target.key[0]),
    targetKeyCollations: spec.target.key.map((k) => target.collations.get(k) ?? null),
    // a range partition on the key's first column is walked in key order: its index serves both
    // a leaf holds only its own rows: walking the key reads nothing twice
    chunkOrder: spec.partition.by === 'time' || (spec.partition.by === 'range' && spec.partition.column !== keyColumns[0]) ? 'column-key' : 'key',
    targetPartitionColumnType: spec.target.mode === 'replace' ? target.columns.get(spec.target.partitionColumn!) : undefined,
    ...(spec.target.mode === 'replace' ? { targetColumns: [...target.columns.keys()] } : {}),
  };
}

/**
 * The real statements, planned but not run: type mismatches between output and target surface
 * here. Their temp output table cannot be created read-only: a new transaction creates it, then
 * turns read-only.
 */
export async function plannedStatementProblems(client: pg.PoolClient, spec: ResolvedSpec, shape: RunShape, transform: FrozenTransform): Promise<SpecProblem[]> {
  const problems: SpecProblem[] = [];
  const compiled = compileRun(spec, shape);
  await client.query(`ROLLBACK; BEGIN; SET LOCAL statement_timeout = ${CHECK_TIMEOUT_MS}`);
  const createErr = await explainError(client, compiled.createOutputTable, false);
  if (createErr) problems.push({ path: 'target.table', message: `cannot hold the transform's output: ${createErr}` });
  if (undoKeep(spec) !== null) for (const message of await beforeImageProblems(client, spec, shape)) problems.push({ path: 'undo', message });
  await client.query('SET LOCAL transaction_read_only = on');
  if (transform.kind === 'sql') {
    const fill = compiled.fillFromSql({ kind: 'null', column: spec.partition.column }, null, null);
    const err = await explainError(client, fill.text.replace(/\$\d+::/g, 'NULL::'));
    if (err)
      problems.push({ path: 'transform.sql', message: `output does not fit ${spec.target.table}: ${err}; cast the column in the SELECT to the target's type` });
  }
  return problems;
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
