/**
 * `plan` and the first half of `start`: load a spec file, check it against its database
 * and plan its partitions. Writes nothing (every check runs in a rolled-back transaction,
 * with EXPLAIN instead of execution). Any problem is a SpecError: exit 2, file and field named.
 */
import type pg from 'pg';
import { createPool, databaseUrlFrom } from '../db/pool';
import { chunkAccessWarnings } from '../preflight/chunk-access';
import { checkAndPlan } from '../preflight/check-and-plan';
import { partitionSizeWarnings } from '../preflight/partition-size';
import { reviewWarnings } from '../preflight/review-warnings';
import { excessPrivilege } from '../preflight/role-posture';
import type { RunShape } from '../compiler/shape';
import type { PlannedPartition } from '../domain/types';
import { SpecError } from '../specs/errors';
import { loadSpecFile, type LoadedSpec } from '../specs/load';
import { databaseIdentity } from '../db/identity';
import { runInputs, serverVersion } from '../preflight/run-inputs';
import type { InputFingerprint } from '../preflight/input-fingerprints';

export interface CheckedSpec {
  loaded: LoadedSpec;
  shape: RunShape;
  partitions: PlannedPartition[];
  /** Nothing wrong, but likely slow or surprising: shown by plan and start, never blocking. */
  warnings: string[];
  /** What a SQL transform reads besides its chunk, fingerprinted (empty for module transforms). */
  inputs: InputFingerprint[];
  database: { variable: string; identity: string; serverVersion: string };
}

export function checkSpec(specFile: string): Promise<CheckedSpec> {
  return withCheckedSpec(specFile, async (checked) => checked);
}

/**
 * Checks the spec, then runs `then` with the result and the connection pool the checks used,
 * closed once `then` settles: `start` goes on to its ledger reads and the workflow's start
 * without closing one connection and opening another.
 */
export async function withCheckedSpec<T>(specFile: string, then: (checked: CheckedSpec, pool: pg.Pool) => Promise<T>): Promise<T> {
  return withCheckedLoaded(loadSpecFile(specFile), then);
}

/** The same for a spec already loaded (a fleet's member). */
export async function withCheckedLoaded<T>(loaded: LoadedSpec, then: (checked: CheckedSpec, pool: pg.Pool) => Promise<T>): Promise<T> {
  const specFile = loaded.file;
  const spec = loaded.resolved;
  let url: string;
  try {
    url = databaseUrlFrom(spec.database);
  } catch (err) {
    throw new SpecError(specFile, [
      {
        path: 'database',
        message: (err as Error).message.replace(/^environment variable \S+ \(named by the spec's database field\) /, `names ${spec.database}, which `),
      },
    ]);
  }
  const db = createPool(url, { max: 2, applicationName: 'backfill-cli' });
  try {
    const checked = await checkAndPlan(db, spec, loaded.transform).catch((err: Error) => {
      throw new SpecError(specFile, [{ path: 'database', message: `cannot be reached through ${spec.database}: ${err.message}` }]);
    });
    if (!checked.ok) throw new SpecError(specFile, checked.problems);
    const excess = excessPrivilege(checked.role);
    const warnings = [
      ...(excess ? [`database: ${excess}`] : []),
      ...(await partitionSizeWarnings(db, spec, checked.partitions.length)),
      ...(await chunkAccessWarnings(db, spec, checked.shape, checked.partitions)),
      ...(await reviewWarnings(db, spec, checked.shape, checked.partitions)),
    ];
    const inputs = await runInputs(db, spec, checked.shape);
    const database = { variable: spec.database, identity: (await databaseIdentity(db)).id, serverVersion: await serverVersion(db) };
    return await then({ loaded, shape: checked.shape, partitions: checked.partitions, warnings, inputs, database }, db);
  } finally {
    await db.end();
  }
}
