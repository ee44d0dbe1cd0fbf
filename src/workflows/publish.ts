/**
 * What the run shows in the Temporal Web UI: its progress table as current details (not in
 * history, so free to update on every change) and a few search attributes for the workflow
 * list — coarse on purpose, since every upsert is a history event.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { RunStatus } from '../domain/statuses';
import type { RunProgress } from '../domain/types';
import { renderProgressMarkdown } from './progress';
import { BackfillPercent, BackfillRowsWritten, BackfillStatus } from './search-attributes';

type Upserts = SearchAttributeUpdatePair[];

/** The search attributes that must change: the status when it changed, percent and rows in whole tens of percent. */
export function searchAttributeChanges(p: RunProgress, status: RunStatus, current: { status?: string; percent?: number }): Upserts {
  const done = p.partitions.succeeded + p.partitions.failed + p.partitions.cancelled;
  const percent = p.partitions.total > 0 ? Math.floor((100 * done) / p.partitions.total) : 0;
  const tens = percent - (percent % 10);
  const changes: Upserts = [];
  if (current.status !== status) changes.push({ key: BackfillStatus, value: status });
  if ((current.percent ?? -1) < tens || (percent === 100 && current.percent !== 100)) {
    changes.push({ key: BackfillPercent, value: tens });
    changes.push({ key: BackfillRowsWritten, value: p.finished.rowsWritten });
  }
  return changes;
}

/** Details only: safe in signal handlers, where commands would interleave with the main loop's. */
export function showDetails(p: RunProgress): void {
  setCurrentDetails(renderProgressMarkdown(p));
}

/** Details and search attributes; call from the main loop only. */
export function publish(p: RunProgress, status: RunStatus): void {
  showDetails(p);
  const attrs = workflowInfo().typedSearchAttributes;
  const changes = searchAttributeChanges(p, status, { status: attrs.get(BackfillStatus), percent: attrs.get(BackfillPercent) });
  if (changes.length > 0) upsertSearchAttributes(changes);
}
