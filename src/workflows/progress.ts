/**
 * A run's progress: the view of its state that the progress query answers and `status` and
 * the Web UI show, and the Markdown table of it in the Web UI's Current Details.
 */
import { FINISHED_RUN_STATUSES } from '../domain/statuses';
import type { PartitionCondition, PartitionState, RunProgress } from '../domain/types';
import { describeWindow } from '../domain/window';
import type { RunState } from './run-state';

export function progress(s: RunState, run: { runId: string; name: string }, nowMs: number): RunProgress {
  const done = s.counts.succeeded + s.counts.failed + s.counts.cancelled;
  const elapsedMin = (nowMs - new Date(s.startedAt).getTime()) / 60_000;
  const perMinute = done > 0 && elapsedMin > 0 ? done / elapsedMin : null;
  const remaining = Math.max(0, s.partitionsTotal - done);
  return {
    runId: run.runId,
    name: run.name,
    status: s.status,
    paused: s.paused,
    cancelRequested: s.cancelRequested,
    partitions: { total: s.partitionsTotal, pending: Math.max(0, s.partitionsTotal - done - s.inFlight.length), running: s.inFlight.length, ...s.counts },
    finished: { ...s.finished },
    limits: s.limits,
    startedAt: s.startedAt,
    partitionsPerMinute: perMinute,
    rowsPerSecond: elapsedMin > 0 && s.finished.rowsRead > 0 ? Math.round(s.finished.rowsRead / (elapsedMin * 60)) : null,
    etaSeconds: perMinute ? Math.round((remaining / perMinute) * 60) : null,
    continuedAsNew: s.continuedAsNew,
    heldBy: s.heldBy,
    ...(s.workerGap ? { workerGap: s.workerGap } : {}),
    lastError: s.lastError,
    conditions: Object.values(s.conditions ?? {}).sort((a, b) => (a.partitionId < b.partitionId ? -1 : 1)),
    ...(s.canary
      ? {
          canary: { partitions: s.canary.partitions, phase: s.canary.phase, held: s.canary.held, failures: s.canary.failures, approvedBy: s.canary.approvedBy },
        }
      : {}),
    ...(s.finalCheck ? { finalCheck: s.finalCheck } : {}),
    ...(s.ramp
      ? { ramp: { stage: Math.min(s.ramp.stage + 1, s.ramp.cutoffs.length + 1), stages: s.ramp.cutoffs.length + 1, phase: s.ramp.phase, held: s.ramp.held } }
      : {}),
  };
}

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
