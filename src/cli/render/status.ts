/**
 * Text for a run's status report (`backfill status`, and the end of `start --wait`,
 * `watch` and the demo), and the pieces other renderers share: limits in words and
 * tables without colour when the output is not a terminal.
 */
import { workerGapLine } from '../../operations/database-workers';
import Table from 'cli-table3';
import type { StatusReport } from '../../operations/status';
import { runLabel } from '../../domain/labels';
import type { Limits } from '../../domain/types';
import { describeWindow } from '../../domain/window';
import { bytes } from './units';
import { describeSubset } from '../../compiler/subset';

/** Whether and until when the run's before-images are kept (docs/undo.md). */
function describeUndo(undo: StatusReport['undo']): string | undefined {
  if (undo === null) return undefined;
  if (undo === 'off') return 'off: this run keeps no before-images (undo: off in its spec)';
  const size = undo.bytes === null ? 'dropped' : bytes(undo.bytes);
  const until = undo.until ? `until ${undo.until}` : `for ${undo.keep} after the run ends`;
  return `before-images of every row it changed (${size}), kept ${until}`;
}

export function renderStatus(r: StatusReport): string {
  return [...headLines(r), ...conditionLines(r), ...progressLines(r), ...countLines(r), ...detailLines(r)].join('\n');
}

/** Who, what and why: the run's identity, its limits, undo and revert, and its inputs. */
function headLines(r: StatusReport): string[] {
  const lines = [
    `Run ${runLabel(r.name, r.runId)}: ${r.status.toUpperCase()}${r.canaryHold ? ` (held: ${r.canaryHold})` : r.paused && r.status === 'paused' ? ' (paused by an operator)' : ''}`,
    `  reason:    ${r.reason}`,
    `  started:   ${r.createdAt} by ${r.startedBy}${r.finishedAt ? `, finished ${r.finishedAt}` : ''}`,
    `  transform: ${r.transform}`,
    `  workflow:  ${r.workflowId}`,
  ];
  if (r.webUi) lines.push(`  web ui:    ${r.webUi}`);
  lines.push(`  limits:    ${describeLimits(r.limits)}`);
  if (r.approvedBy) lines.push(`  approved:  started from a saved plan approved by ${r.approvedBy}`);
  const told = notificationLine(r.notifications);
  if (told) lines.push(`  notified:  ${told}`);
  if (r.subset) lines.push(`  subset:    ${describeSubset(r.subset)}`);
  else if (r.onlyStale) lines.push(`  scope:     only the partitions of ${r.name} that were stale when it started`);
  const undo = describeUndo(r.undo);
  if (undo) lines.push(`  undo:      ${undo}`);
  if (r.revert) {
    const c = r.revert.conflicts;
    lines.push(`  reverts:   run ${r.revert.of}: puts back what it wrote, from its before-images`);
    if (c.total > 0) {
      const shown = c.examples.map((e) => `${e.partitionId} ${e.key} (${e.change})`).join(', ');
      lines.push(
        `  conflicts: ${c.total} row(s) changed after ${r.revert.of} wrote them, left as they are: ${shown}${c.total > c.examples.length ? ', …' : ''}`,
      );
    }
  }
  if (r.revertedBy) {
    const runs = r.revertedBy.runs.map((x) => `${x.runId} (${x.status})`).join(', ');
    lines.push(`  reverted:  ${r.revertedBy.partitions} partition(s), by ${runs}`);
  }
  if (r.inputs.length > 0) lines.push(`  inputs:    ${r.inputs.join(', ')} (checked before each partition; a change holds the run)`);
  if (r.computedBeforeInputChange > 0) {
    lines.push(
      `  stale:     ${r.computedBeforeInputChange} partition(s) were computed before the accepted input change; ` +
        `recompute them with the input as it is now: backfill start ${r.specFile ?? '<spec>'} --only-stale`,
    );
  }
  return lines;
}

/** What holds or broke the run, and what to do about it. */
function conditionLines(r: StatusReport): string[] {
  const lines: string[] = [];
  if (r.windowOpensAt) lines.push(`  holding:   outside the allowed hours (${describeWindow(r.limits.window!)}); continues by itself at ${r.windowOpensAt}`);
  if (r.waitingForWorker) lines.push(`  waiting:   ${workerGapLine(r.waitingForWorker)}`);
  if (r.workflowEnded) {
    lines.push(
      `  workflow:  ended ${r.workflowEnded.status} without finishing the run (${r.workflowEnded.why}); ` +
        `nothing moves it any more: close the ledger's record with: backfill cancel ${r.runId} --reason "…"`,
    );
  }
  if (r.lastError) lines.push(`  error:     ${r.lastError}`);
  if (r.rowsOutsidePlan) {
    lines.push(
      `  scope:     ${r.rowsOutsidePlan} row(s) in scope arrived after planning outside every planned partition and were not backfilled; ` +
        `cover them with a new run: backfill start ${r.specFile ?? '<spec>'}`,
    );
  }
  return lines;
}

/** How far it is, how long it has left, and which workers did the work. */
function progressLines(r: StatusReport): string[] {
  const lines: string[] = [];
  const t = r.totals;
  if (r.rowsPlanned) {
    const share = r.rowsPlanned.rows > 0 ? Math.min(100, Math.floor((100 * t.rowsRead) / r.rowsPlanned.rows)) : 100;
    lines.push(`  progress:  ${t.rowsRead} of ${r.rowsPlanned.rows} rows${r.rowsPlanned.exact ? '' : ' (estimated)'} read, ${share} %`);
  }
  if (r.eta) {
    const whole = r.eta.elapsedSeconds + r.eta.seconds;
    const plan = r.eta.plannedSeconds
      ? `; ${duration(whole)} in all, the approved plan projected ${duration(r.eta.plannedSeconds)} (${whole >= r.eta.plannedSeconds ? '+' : ''}${Math.round((100 * (whole - r.eta.plannedSeconds)) / r.eta.plannedSeconds)} %)`
      : '';
    lines.push(`  eta:       about ${duration(r.eta.seconds)} more at ${r.eta.rowsPerSecond} rows/s (the last minute's pace)${plan}`);
  }
  if (r.workers.length > 0) {
    const rows = r.workers.reduce((n, w) => n + w.rows, 0);
    const share = (w: { rows: number }) => (rows > 0 ? `${Math.round((100 * w.rows) / rows)} %` : `${w.rows} rows`);
    const shown = r.workers.slice(0, 8).map((w) => `${w.worker} ${share(w)}`);
    const more = r.workers.length > 8 ? ` and ${r.workers.length - 8} more` : '';
    lines.push(`  workers:   ${r.workers.length} wrote its chunks (share of rows read): ${shown.join(', ')}${more}`);
  }
  return lines;
}

/** Partitions by status and rows by what became of them. */
function countLines(r: StatusReport): string[] {
  const lines: string[] = [];
  const t = r.totals;
  const table = new Table({
    style: plainStyle(),
    head: ['partitions', 'pending', 'running', 'succeeded', 'failed', 'cancelled', 'rows read', 'written', 'unchanged', 'skipped'],
  });
  table.push([
    t.total,
    t.byStatus.pending,
    t.byStatus.running,
    t.byStatus.succeeded,
    t.byStatus.failed,
    t.byStatus.cancelled,
    t.rowsRead,
    t.rowsWritten,
    t.rowsUnchanged,
    t.rowsSkipped ?? 0,
  ]);
  lines.push(table.toString());
  if (t.cutWhileRunning > 0) {
    lines.push(
      `  ${t.cutWhileRunning} of the partitions cut from running ones (limits.splitTail): a slot with nothing left to start took the upper half of what one had left`,
    );
  }
  if (t.concurrentRetries > 0) {
    lines.push(
      `  ${t.concurrentRetries} chunk(s) computed again because the application changed their rows while they ran (nothing of theirs was overwritten)`,
    );
  }
  return lines;
}

/** Holding and failed partitions, gates, downstream, consumers and recent events. */
function detailLines(r: StatusReport): string[] {
  const lines: string[] = [];
  if (r.holding.length > 0) {
    lines.push('Holding:');
    for (const h of r.holding) lines.push(`  ${h.partitionId}: ${h.reason}`);
  }
  if (r.failures.length > 0) {
    lines.push('Failed partitions:');
    for (const f of r.failures) lines.push(`  ${f.partitionId} (${f.attempts} attempt${f.attempts === 1 ? '' : 's'}): ${f.error ?? 'no message'}`);
  }
  if (r.gates.length > 0) {
    lines.push('Gates:');
    for (const g of r.gates) {
      const where = g.partitionId ? ` partition ${g.partitionId}` : '';
      const what = g.rowsChecked > 0 ? `${g.rowsChecked} rows compared, ${g.violations} wrong` : `${g.violations} violation(s)`;
      lines.push(
        `  ${g.stage.padEnd(6)} ${g.gate}${where}: ${g.passed ? 'passed' : 'FAILED'} (${what})${g.examples ? `; ${g.examples.replace(/\n/g, ' ')}` : ''}`,
      );
    }
  }
  if (r.downstream) {
    lines.push(
      `Downstream: ${r.downstream.status ?? 'not run yet'}${r.downstream.status === 'failed' ? ` — retry the actions alone with: backfill after ${r.runId}` : ''}`,
    );
    for (const a of r.downstream.actions)
      lines.push(`  ${a.status.padEnd(9)} ${a.description}${a.tries > 1 ? ` (${a.tries} tries)` : ''}${a.error ? `: ${a.error}` : ''}`);
  }
  if (r.consumers.length > 0 || r.changesSemantics) {
    lines.push(`Consumers: ${r.consumers.join(', ') || 'not listed'}${r.changesSemantics ? ' — this change alters what the values mean: tell them' : ''}`);
  }
  if (r.events.length > 0) {
    lines.push('Recent events:');
    for (const e of r.events) lines.push(`  ${e.at}  ${e.kind.padEnd(16)} ${e.actor ?? ''}${e.reason ? ` — ${e.reason}` : ''}`);
  }
  return lines;
}

/** No ANSI colours when the output is not a terminal (logs, CI, pipes). */
export function plainStyle(): { head: string[]; border: string[] } | undefined {
  return process.stdout.isTTY ? undefined : { head: [], border: [] };
}

export function describeLimits(l: Limits): string {
  return [
    `concurrency ${l.concurrency}`,
    `chunk size ${l.chunkSize}`,
    l.rowsPerSecond ? `${l.rowsPerSecond} rows/s` : 'no rows/s cap',
    l.window ? `allowed ${describeWindow(l.window)}` : 'all hours',
  ].join(', ');
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** "4 delivered, 1 failing (webhook https://hooks.example.com: answered 500)" */
function notificationLine(n: StatusReport['notifications']): string | undefined {
  if (n.length === 0) return undefined;
  const by = (status: string) => n.filter((x) => x.status === status);
  const problems = [...by('failing'), ...by('refused')];
  return (
    ['delivered', 'failing', 'refused', 'pending']
      .filter((st) => by(st).length > 0)
      .map((st) => `${by(st).length} ${st}`)
      .join(', ') + (problems.length > 0 ? ` (${problems[0].kind} to ${problems[0].error ?? problems[0].target})` : '')
  );
}
