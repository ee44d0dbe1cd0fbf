/**
 * Statements the checks plan or run in a savepoint: what PostgreSQL says of them, without
 * ending the check's transaction. Used by inspect.ts and its parts.
 */
import type pg from 'pg';
import { describePgError } from '../db/errors';
import { quoteTable } from '../db/sql';
import { querySingle } from '../db/session';
import type { ResolvedSpec } from '../specs/resolve';

/** The error a statement raises (planned with EXPLAIN, or run with `explain` false), or undefined. */
export async function explainError(client: pg.PoolClient, sql: string, explain = true): Promise<string | undefined> {
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

/** The columns a SQL transform outputs, read from an empty chunk. */
export async function describeTransform(client: pg.PoolClient, spec: ResolvedSpec, sql: string): Promise<{ columns: string[] } | { error: string }> {
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
