/** What `backfill verify` reports, for a backfill (verify-run.ts) and for a revert (verify-revert.ts) alike. */
import type { PartitionFindings } from '../gates/gate-checks';
import type { InvariantResult } from '../gates/invariants';

export interface VerifiedPartition extends PartitionFindings {
  id: string;
  status: string;
  /** Wrong rows: compared and not as the transform computes them, plus invariant violations. */
  wrong: number;
}

export interface VerifyReport {
  runId: string;
  name: string;
  clean: boolean;
  rowsCompared: number;
  partitions: VerifiedPartition[];
  runInvariants: InvariantResult[];
  /** Partitions not compared because they did not succeed. */
  skipped: { id: string; status: string }[];
}

export interface VerifyOptions {
  /** One partition id; all succeeded partitions when absent. */
  partition?: string;
  onPartition?: (p: VerifiedPartition, done: number, total: number) => void;
}
