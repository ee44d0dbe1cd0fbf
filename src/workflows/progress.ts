/**
 * Renders a run's progress as the Markdown table shown in the Web UI's Current Details.
 */
import { FINISHED_RUN_STATUSES } from '../shared/statuses';
import type { PartitionCondition, PartitionState, RunProgress } from '../shared/types';
import { describeWindow } from '../shared/window';

export function renderProgressMarkdown(p: RunProgress): string {
  const finished = FINISHED_RUN_STATUSES.includes(p.status);
  const state = finished ? p.status : p.cancelRequested ? 'cancelling' : p.paused ? 'paused' : p.status;
  const eta = finished ? 'done' : p.etaSeconds === null ? '—' : `${Math.round(p.etaSeconds / 60)} min`;
  const holder =
    p.heldBy?.actor === 'canary'
      ? 'Held by its canary'
      : p.heldBy?.actor === 'ramp'
        ? 'Held by a ramp stage'
        : `${p.cancelRequested ? 'Cancelled' : 'Paused'} by ${p.heldBy?.actor}`;
  const held = !finished && p.heldBy ? [`**${holder}**${p.heldBy.reason ? `: ${p.heldBy.reason}` : ''}`, ''] : [];
  const waiting =
    !finished && p.workerGap
      ? [
          `**Waiting for a worker:** no worker serves ${p.workerGap.database}${p.workerGap.since ? ` since ${p.workerGap.since.slice(11, 19)} UTC` : ''}; ` +
            `the run goes on when one does (start one where ${p.workerGap.database} is set: \`BACKFILL_DATABASES=${p.workerGap.database} backfill worker\`).`,
          '',
        ]
      : [];
  const gates = [
    ...(p.canary
      ? [
          `Canary: ${p.canary.partitions.length} partition(s), ${p.canary.phase}${p.canary.approvedBy ? ` (approved by ${p.canary.approvedBy.actor}${p.canary.approvedBy.reason ? `: ${p.canary.approvedBy.reason}` : ''})` : ''}.`,
        ]
      : []),
    ...(p.ramp ? [`Ramp: stage ${p.ramp.stage} of ${p.ramp.stages}, ${p.ramp.phase}.`] : []),
    ...(p.finalCheck
      ? [
          `Final check: ${p.finalCheck.passed ? 'passed' : `FAILED — ${p.finalCheck.failures.slice(0, 3).join('; ')}`} (${p.finalCheck.partitionsChecked} partitions).`,
        ]
      : []),
  ];
  const failure = p.lastError ? ['', `**Last error:** ${p.lastError}`] : [];
  const conditions = finished || p.conditions.length === 0 ? [] : ['', ...renderConditions(p.conditions)];
  return [
    `### Backfill ${p.name} / ${p.runId}: ${state}`,
    '',
    ...held,
    ...waiting,
    '| partitions | total | pending | running | succeeded | failed | cancelled |',
    '|---|---|---|---|---|---|---|',
    `| | ${p.partitions.total} | ${p.partitions.pending} | ${p.partitions.running} | ${p.partitions.succeeded} | ${p.partitions.failed} | ${p.partitions.cancelled} |`,
    '',
    '| rows (finished partitions) | read | written | unchanged |',
    '|---|---|---|---|',
    `| | ${p.finished.rowsRead} | ${p.finished.rowsWritten} | ${p.finished.rowsUnchanged} |`,
    '',
    `Rate ${p.rowsPerSecond ?? '—'} rows/s (finished partitions). ETA ${eta}.`,
    '',
    `Limits: concurrency ${p.limits.concurrency}, chunk size ${p.limits.chunkSize}${p.limits.rowsPerSecond ? `, ${p.limits.rowsPerSecond} rows/s` : ', no rows/s cap'}` +
      `${p.limits.window ? `, writes only ${describeWindow(p.limits.window)}` : ''}.`,
    ...(gates.length ? ['', ...gates] : []),
    ...conditions,
    ...failure,
  ].join('\n');
}

const STATE_LABEL: Record<PartitionState, string> = {
  writing: 'writing',
  paused: 'paused',
  throttled: 'waiting for the rows/s budget',
  slowed: 'slowed',
  held: 'held',
  'outside-window': 'waiting for the window',
};

/** Why partitions are slower than their limits allow: the answer to "why is my backfill slow?". */
function renderConditions(conditions: PartitionCondition[]): string[] {
  const shown = conditions.slice(0, 20);
  return [
    '| partition | state | why | since |',
    '|---|---|---|---|',
    ...shown.map((c) => `| ${c.partitionId} | ${STATE_LABEL[c.state]} | ${c.reason ?? ''} | ${c.since.slice(11, 19)} UTC |`),
    ...(conditions.length > shown.length ? ['', `…and ${conditions.length - shown.length} more partitions slowed or held.`] : []),
  ];
}
