/**
 * Live progress of a run in the terminal, read from the ledger once a second: a bar over
 * partitions with rows read/written, rows/s and ETA. Without a TTY (CI, logs) it prints
 * a plain line every few seconds instead. Resolves with the run's final ledger status.
 */
import cliProgress from 'cli-progress';
import type pg from 'pg';
import { runTotals } from '../ledger/partitions';
import { getRun } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../shared/statuses';

export async function watchRun(pool: pg.Pool, runId: string, options: { stream?: NodeJS.WriteStream; intervalMs?: number } = {}): Promise<RunStatus> {
  const stream = options.stream ?? process.stderr;
  const interval = options.intervalMs ?? 1000;
  const tty = Boolean(stream.isTTY);
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream,
          format: '{bar} {value}/{total} partitions | {read} read, {written} written | {rate} rows/s | ETA {eta_formatted} | {state}',
          hideCursor: true,
          etaBuffer: 30,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const started = Date.now();
  let lastPrint = 0;
  let samples: { t: number; rows: number }[] = [];
  let run = await getRun(pool, runId);
  if (!run) throw new Error(`run ${runId} is not in the ledger`);
  bar?.start(run.partitions_total, 0, { read: 0, written: 0, rate: 0, state: run.status });
  for (;;) {
    run = (await getRun(pool, runId))!;
    const t = await runTotals(pool, runId);
    const done = t.byStatus.succeeded + t.byStatus.failed + t.byStatus.cancelled;
    const now = Date.now();
    samples = [...samples.filter((s) => now - s.t <= 10_000), { t: now, rows: t.rowsRead }];
    const first = samples[0];
    const rate = now > first.t ? Math.round(((t.rowsRead - first.rows) * 1000) / (now - first.t)) : 0;
    const state = run.paused ? 'paused' : run.status;
    if (bar) {
      bar.update(done, { read: t.rowsRead, written: t.rowsWritten, rate, state });
    } else if (now - lastPrint >= 5000 || !ACTIVE_RUN_STATUSES.includes(run.status)) {
      lastPrint = now;
      stream.write(
        `[${Math.round((now - started) / 1000)}s] ${state}: ${done}/${t.total} partitions, ${t.rowsRead} rows read, ${t.rowsWritten} written, ${rate} rows/s${t.byStatus.failed ? `, ${t.byStatus.failed} failed` : ''}\n`,
      );
    }
    if (!ACTIVE_RUN_STATUSES.includes(run.status)) {
      bar?.stop();
      return run.status;
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
