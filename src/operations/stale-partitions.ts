/**
 * `stale`: the partitions of a spec whose rows were written by another transform version than
 * the spec's, or computed before an accepted input change — what `start --only-stale` re-runs.
 */
import { stalePartitions, type StalePartition } from '../ledger/stale';
import { loadSpecFile } from '../specs/load';
import { withLedgerPool } from './ledger-access';

export interface StaleReport {
  name: string;
  version: number;
  stale: StalePartition[];
}

export async function staleOfSpec(specFile: string): Promise<StaleReport> {
  const { spec } = loadSpecFile(specFile);
  return withLedgerPool(spec.database, async (pool) => ({
    name: spec.name,
    version: spec.transform.version,
    stale: await stalePartitions(pool, spec.name, spec.transform.version),
  }));
}
