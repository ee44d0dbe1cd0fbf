/**
 * The session-private table a chunk's output rows go to before the write: one per target
 * shape per session, named stably so a pooled session reuses it.
 */
import { fnv1a } from '../shared/ids';
import type { Spec } from '../specs/schema';
import type { RunShape } from './shape';

export function outputTableName(spec: Spec, shape: RunShape): string {
  return `backfill_out_${fnv1a(`${spec.target.table}|${shape.outputColumns.join(',')}`)}`;
}
