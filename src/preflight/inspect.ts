/**
 * Checks a spec against the database before anything runs, and reads the RunShape the
 * run is compiled against. Every check runs inside a transaction that is rolled back,
 * with EXPLAIN instead of execution, so checking writes nothing. Problems name the
 * spec field, the value, what the database said, and the fix.
 *
 * The checks go in the order a fix would: the server, the tables (inspect-tables.ts), the
 * spec's SQL against them, the transform's output (inspect-output.ts), then the real
 * statements planned against the shape they make.
 */
import type pg from 'pg';
import type { RunShape } from '../compiler/shape';
import { inReadOnlyCheck } from '../db/session';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import type { ResolvedSpec } from '../specs/resolve';
import { quoteTable } from '../db/sql';
import { explainError } from './explain';
import { outputProblems, plannedStatementProblems, readShape, transformOutput } from './inspect-output';
import { partitionProblems, sourceKeyAndColumns, targetProblems } from './inspect-tables';
import { tableAdvice, tableInfo, type TableInfo } from './table-info';

export { baseType } from './inspect-tables';

export type InspectResult = { ok: true; shape: RunShape } | { ok: false; problems: SpecProblem[] };

export async function inspectSpec(pool: pg.Pool, spec: ResolvedSpec, transform: FrozenTransform): Promise<InspectResult> {
  // read-only, time-limited and always rolled back; the output-table check makes the one
  // exception it needs (a temp table) in a transaction of its own, rolled back as well
  return inReadOnlyCheck(pool, (client) => inspectWith(client, spec, transform));
}

async function inspectWith(client: pg.PoolClient, spec: ResolvedSpec, transform: FrozenTransform): Promise<InspectResult> {
  const problems: SpecProblem[] = [];
  const failed = (more: SpecProblem[] = []): InspectResult => ({ ok: false, problems: [...problems, ...more] });

  const server = await serverProblems(client);
  if (server.length > 0) return failed(server);
  const tables = await readTables(client, spec);
  problems.push(...tables.problems);
  if (!tables.found) return failed();
  const { source, target } = tables.found;

  problems.push(...(await sourceKeyAndColumns(client, spec, source)));
  problems.push(...(await partitionProblems(client, spec, source)));
  problems.push(...targetProblems(spec, target));
  problems.push(...(await specSqlProblems(client, spec)));
  if (problems.length > 0) return failed();

  const output = await transformOutput(client, spec, transform, source);
  problems.push(...output.problems);
  if (!output.columns) return failed();
  problems.push(...outputProblems(spec, output.columns, target));
  if (problems.length > 0) return failed();

  const shape = await readShape(client, spec, { source, target }, output.columns);
  problems.push(...(await plannedStatementProblems(client, spec, shape, transform)));
  return problems.length > 0 ? failed() : { ok: true, shape };
}

/** PostgreSQL 15 or newer: chunks write with MERGE. */
export async function serverProblems(client: Pick<pg.PoolClient, 'query'>): Promise<SpecProblem[]> {
  // (SHOW names its column after the setting: read through current_setting, or the number is NaN and no version is ever refused)
  const version = Number((await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0].v);
  if (version >= 150000) return [];
  return [{ path: 'database', message: `points at PostgreSQL ${Math.floor(version / 10000)}; backfill needs PostgreSQL 15 or newer (it writes with MERGE)` }];
}

async function readTables(client: pg.PoolClient, spec: ResolvedSpec): Promise<{ found?: { source: TableInfo; target: TableInfo }; problems: SpecProblem[] }> {
  const problems: SpecProblem[] = [];
  const source = await tableInfo(client, spec.source.table);
  const target = await tableInfo(client, spec.target.table);
  if (!source) {
    const advice = await tableAdvice(client, spec.source.table, 'check the name and its schema');
    problems.push({ path: 'source.table', message: `names ${spec.source.table}, which does not exist; ${advice}` });
  }
  if (!target) {
    const advice = await tableAdvice(client, spec.target.table, 'create it first (backfill never creates tables)');
    problems.push({ path: 'target.table', message: `names ${spec.target.table}, which does not exist; ${advice}` });
  }
  if (/^backfill\./i.test(spec.target.table))
    problems.push({ path: 'target.table', message: 'is in the backfill schema, which holds the ledger; write somewhere else' });
  return { ...(source && target ? { found: { source, target } } : {}), problems };
}

/** The filter and the guards, planned against the tables they read. */
async function specSqlProblems(client: pg.PoolClient, spec: ResolvedSpec): Promise<SpecProblem[]> {
  const problems: SpecProblem[] = [];
  if (spec.source.where) {
    const err = await explainError(client, `SELECT 1 FROM ${quoteTable(spec.source.table)} s WHERE (${spec.source.where}\n)`);
    if (err)
      problems.push({ path: 'source.where', message: `does not compile against ${spec.source.table}: ${err}; it is a SQL condition on the source rows` });
  }
  const guards = spec.limits.guards;
  for (const [path, sql] of [
    ...(guards?.probeMs ? [['limits.guards.probeMs.sql', guards.probeMs.sql]] : []),
    ...(guards?.custom ?? []).map((g, i) => [`limits.guards.custom.${i}.sql`, `SELECT (${g.sql}\n)`]),
  ]) {
    const err = await explainError(client, sql);
    if (err) problems.push({ path, message: `does not compile: ${err}; a guard is a query returning one number` });
  }
  return problems;
}
