/**
 * The inputs of a run as a whole: the fingerprints of what its SQL transform reads (see
 * input-fingerprints.ts), taken in a read-only, time-limited transaction, and the server's
 * version. One definition used by plan, registration, the check before each partition and
 * an operator's acceptance of a change, so all four compare like with like.
 */
import type pg from 'pg';
import type { ResolvedSpec } from '../specs/resolve';
import { sha256 } from '../util/hash';
import { fingerprintInputs, type InputFingerprint } from './input-fingerprints';
import { inReadOnlyCheck } from '../db/session';
import { partitionTree } from './table-info';
import type { RunShape } from '../compiler/shape';

export async function runInputs(
  pool: pg.Pool,
  spec: Pick<ResolvedSpec, 'source' | 'target'> & { partition?: Pick<ResolvedSpec['partition'], 'by'> },
  shape: Pick<RunShape, 'transformReads'>,
): Promise<InputFingerprint[]> {
  const reads = shape.transformReads;
  const native = spec.partition?.by === 'native';
  if (!native && (!reads || (reads.tables.length === 0 && reads.functions.length === 0))) return [];
  return inReadOnlyCheck(pool, async (client) => {
    const inputs = reads ? await fingerprintInputs(client, reads, [spec.source.table, spec.target.table]) : [];
    // one backfill partition per leaf: a leaf attached, detached or dropped mid-run changes the plan's ground
    return native ? [...inputs, await leafLayout(client, spec.source.table)] : inputs;
  });
}

/** The source's partitions and their bounds, at every level, as one fingerprint. */
async function leafLayout(client: pg.PoolClient, table: string): Promise<InputFingerprint> {
  const layout = (await partitionTree(client, table)).map((p) => `${p.name} ${p.bound}`).join('\n');
  return { name: `${table} (leaf partitions)`, kind: 'partitioned table', definition: sha256(layout) };
}

export async function serverVersion(db: pg.Pool | pg.PoolClient): Promise<string> {
  const { rows } = await db.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return `PostgreSQL ${rows[0].v}`;
}
