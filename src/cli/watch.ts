/**
 * Live progress of a run in the terminal, read from the ledger once a second: a bar over
 * partitions with rows read/written, rows/s and ETA, one line per partition in flight
 * (rows so far, cursor, and why it is slowed or held), and a line for each partition that
 * fails, as it fails. Without a TTY (CI, logs) it prints a plain line every few seconds
 * instead, and a line whenever a partition starts or stops being slowed or held. Resolves
 * with the run's final ledger status.
 */
import cliProgress from 'cli-progress';
import type pg from 'pg';
import { listPartitions, runTotals } from '../ledger/partitions';
import { getRun } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../shared/statuses';

export async function watchRun(pool: pg.Pool, runId: string, options: { stream?: NodeJS.WriteStream; intervalMs?: number } = {}): Promise<RunStatus> {
  const stream = options.stream ?? process.stderr;
  const interval = options.intervalMs ?? 1000;
  const tty = Boolean(stream.isTTY);
  const bars = tty
    ? new cliProgress.MultiBar({ stream, hideCursor: true, etaBuffer: 30, clearOnComplete: false, format: '{bar} {value}/{total} partitions | {read} read, {written} written | {rate} rows/s | ETA {eta_formatted} | {state}' }, cliProgress.Presets.shades_classic)
    : undefined;
  const started = Date.now();
  let lastPrint = 0;
  let samples: { t: number; rows: number }[] = [];
  const reportedFailures = new Set<string>();
  // what each running partition was last said to be waiting for, by kind (a guard's value moving is not news)
  const shownReasons = new Map<string, string>();
  let run = await getRun(pool, runId);
  if (!run) throw new Error(`run ${runId} is not in the ledger`);
  const runBar = bars?.create(run.partitions_total, 0, { read: 0, written: 0, rate: 0, state: run.status });
  const partitionBars = new Map<string, cliProgress.SingleBar>();
  for (;;) {
    run = (await getRun(pool, runId))!;
    const t = await runTotals(pool, runId);
    const done = t.byStatus.succeeded + t.byStatus.failed + t.byStatus.cancelled;
    const now = Date.now();
    samples = [...samples.filter((s) => now - s.t <= 10_000), { t: now, rows: t.rowsRead }];
    const first = samples[0];
    const rate = now > first.t ? Math.round(((t.rowsRead - first.rows) * 1000) / (now - first.t)) : 0;
    const state = run.paused ? 'paused by an operator' : run.cancel_requested ? 'cancelling' : run.status;

    for (const failed of await listPartitions(pool, runId, { status: ['failed'] })) {
      if (reportedFailures.has(failed.partition_id)) continue;
      reportedFailures.add(failed.partition_id);
      const line = `partition ${failed.partition_id} FAILED: ${failed.last_error ?? 'no message'}\n`;
      if (bars) bars.log(line);
      else stream.write(line);
    }
    const running = await listPartitions(pool, runId, { status: ['running'], limit: bars ? 20 : 1000 });
    if (!bars) {
      for (const p of running) {
        const kind = p.hold_reason?.replace(/[\d.,]+/g, '#') ?? '';
        if ((shownReasons.get(p.partition_id) ?? '') === kind) continue;
        stream.write(`partition ${p.partition_id}: ${p.hold_reason ?? 'writing again'}\n`);
        shownReasons.set(p.partition_id, kind);
      }
    }
    if (bars && runBar) {
      runBar.update(done, { read: t.rowsRead, written: t.rowsWritten, rate, state });
      const seen = new Set(running.map((p) => p.partition_id));
      for (const [id, bar] of partitionBars) {
        if (!seen.has(id)) {
          bars.remove(bar);
          partitionBars.delete(id);
        }
      }
      for (const p of running) {
        const payload = { id: p.partition_id, rows: p.rows_read, chunks: p.chunks, cursor: p.cursor ?? '—', why: p.hold_reason ? ` — ${p.hold_reason}` : '' };
        const bar = partitionBars.get(p.partition_id);
        if (bar) bar.update(0, payload);
        else partitionBars.set(p.partition_id, bars.create(1, 0, payload, { format: '  ↳ {id}: {rows} rows in {chunks} chunks, cursor {cursor}{why}' }));
      }
    } else if (now - lastPrint >= 5000 || !ACTIVE_RUN_STATUSES.includes(run.status)) {
      lastPrint = now;
      stream.write(
        `[${Math.round((now - started) / 1000)}s] ${state}: ${done}/${t.total} partitions, ${t.rowsRead} rows read, ${t.rowsWritten} written, ${rate} rows/s${t.byStatus.failed ? `, ${t.byStatus.failed} failed` : ''}\n`,
      );
    }
    if (!ACTIVE_RUN_STATUSES.includes(run.status)) {
      for (const bar of partitionBars.values()) bars?.remove(bar);
      bars?.stop();
      return run.status;
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
