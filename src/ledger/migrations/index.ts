/**
 * Numbered ledger migrations, applied in order by ../migrate.ts. Never edit a
 * migration that has shipped; add the next number instead.
 */
import { m0001Init } from './0001-init';
import { m0002RunAttempts } from './0002-run-attempts';
import { m0003RateLimits } from './0003-rate-limits';
import { m0004ChunksAndGuards } from './0004-chunks-and-guards';
import { m0005StatusTransitions } from './0005-status-transitions';
import { m0006ErrorDetail } from './0006-error-detail';
import { m0007OneActiveRunPerTarget } from './0007-one-active-run-per-target';
import { m0008GatesAndDownstream } from './0008-gates-and-downstream';
import { m0009TransformArtifacts } from './0009-transform-artifacts';
import { m0010InputsAndApproval } from './0010-inputs-and-approval';
import { m0011ChunkWorker } from './0011-chunk-worker';
import { m0012CommitProbes } from './0012-commit-probes';
import { m0013PartitionSplits } from './0013-partition-splits';
import { m0014BeforeImages } from './0014-before-images';
import { m0015Reverts } from './0015-reverts';
import { m0016Fleets } from './0016-fleets';
import { m0017Subsets } from './0017-subsets';
import { m0018Notifications } from './0018-notifications';
import { m0019PartitionWorkflows } from './0019-partition-workflows';

import type { Migration } from './migration';

export type { Migration } from './migration';

export const MIGRATIONS: readonly Migration[] = [
  m0001Init,
  m0002RunAttempts,
  m0003RateLimits,
  m0004ChunksAndGuards,
  m0005StatusTransitions,
  m0006ErrorDetail,
  m0007OneActiveRunPerTarget,
  m0008GatesAndDownstream,
  m0009TransformArtifacts,
  m0010InputsAndApproval,
  m0011ChunkWorker,
  m0012CommitProbes,
  m0013PartitionSplits,
  m0014BeforeImages,
  m0015Reverts,
  m0016Fleets,
  m0017Subsets,
  m0018Notifications,
  m0019PartitionWorkflows,
];
