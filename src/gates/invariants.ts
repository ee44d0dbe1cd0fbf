/**
 * Declared invariants (spec `validate.invariants`): SQL that returns the rows breaking a rule,
 * run read-only with `source_rows` bound to one partition's source rows in scope, or to the
 * whole scope. Zero rows: the invariant holds. Violating rows are row data: a few are kept,
 * as JSON text, for the ledger only.
 */
import type pg from 'pg';
import type { PartitionBounds } from '../domain/types';
import type { Invariant } from '../specs/validate-schema';
import { querySingle } from '../db/session';
import type { CompiledRun } from '../compiler/statements';
import { readOnly } from './compare';

export interface InvariantResult {
  name: string;
  violations: number;
  examples: string[];
}

const EXAMPLES = 5;

export function invariantsFor(list: Invariant[] | undefined, scope: 'partition' | 'run'): Invariant[] {
  return (list ?? []).filter((i) => (i.scope ?? 'partition') === scope);
}

export async function checkInvariant(
  pool: pg.Pool,
  compiled: CompiledRun,
  invariant: Invariant,
  bounds: PartitionBounds | null,
  timeoutMs: number,
): Promise<InvariantResult> {
  const statement = compiled.invariant(invariant.sql, bounds, EXAMPLES);
  const row = await readOnly(
    pool,
    timeoutMs,
    async (client) => (await querySingle<{ n: string; examples: string[] | null }>(client, statement.text, statement.values)).rows[0],
  );
  return { name: invariant.name, violations: Number(row.n), examples: row.examples ?? [] };
}
