/**
 * The inputs of a run as a whole: the fingerprints of what its SQL transform reads (see
 * input-fingerprints.ts), taken in a read-only, time-limited transaction, and the server's
 * version. One definition used by plan, registration, the check before each partition and
 * an operator's acceptance of a change, so all four compare like with like.
 */
import type pg from 'pg';
import type { Spec } from '../specs/schema';
import { fingerprintInputs, type InputFingerprint } from './input-fingerprints';
import { inReadOnlyCheck } from '../db/session';
import type { RunShape } from '../compiler/shape';

export async function runInputs(pool: pg.Pool, spec: Pick<Spec, 'source' | 'target'>, shape: Pick<RunShape, 'transformReads'>): Promise<InputFingerprint[]> {
  const reads = shape.transformReads;
  if (!reads || (reads.tables.length === 0 && reads.functions.length === 0)) return [];
  return inReadOnlyCheck(pool, (client) => fingerprintInputs(client, reads, [spec.source.table, spec.target.table]));
}

export async function serverVersion(db: pg.Pool | pg.PoolClient): Promise<string> {
  const { rows } = await db.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return `PostgreSQL ${rows[0].v}`;
}
