/**
 * Live progress of a run in the terminal: a bar over partitions with rows read/written,
 * rows/s and ETA, one line per partition in flight (rows so far, cursor, and why it is
 * slowed or held), and a line for each partition that fails, as it fails. Without a TTY
 * (CI, logs) a plain line every few seconds instead, and a line whenever a partition
 * starts or stops being slowed or held. Resolves with the run's final ledger status.
 */
import cliProgress from 'cli-progress';
import type pg from 'pg';
import { followRun, type RunSnapshot } from '../../operations/follow';
import type { RunStatus } from '../../shared/statuses';

export async function watchRun(pool: pg.Pool, runId: string, options: { stream?: NodeJS.WriteStream; intervalMs?: number } = {}): Promise<RunStatus> {
  const stream = options.stream ?? process.stderr;
  const view = stream.isTTY ? barView(stream) : lineView(stream);
  try {
    return await followRun(pool, runId, (s) => view.show(s), {
      intervalMs: options.intervalMs,
      runningLimit: stream.isTTY ? 20 : 1000,
      // the workers ride out a database restart; so does the follower, saying so once
      onOutage: (() => {
        let away = false;
        return (message: string | null) => {
          if (message && !away) stream.write(`${message}\n`);
          if (!message && away) stream.write('database back; following again\n');
          away = message !== null;
        };
      })(),
    });
  } finally {
    view.stop();
  }
}

function stateOf(s: RunSnapshot): string {
  if (s.canaryHold) return `held: ${s.canaryHold}`;
  return s.run.paused ? 'paused by an operator' : s.run.cancel_requested ? 'cancelling' : s.run.status;
}

/** Failed partitions are news once each. */
function failureLines(): (s: RunSnapshot) => string[] {
  const reported = new Set<string>();
  return (s) =>
    s.failed
      .filter((p) => !reported.has(p.partition_id) && reported.add(p.partition_id))
      .map((p) => `partition ${p.partition_id} FAILED: ${p.last_error ?? 'no message'}\n`);
}

function barView(stream: NodeJS.WriteStream) {
  const bars = new cliProgress.MultiBar(
    { stream, hideCursor: true, etaBuffer: 30, clearOnComplete: false, format: '{bar} {value}/{total} partitions | {read} read, {written} written | {rate} rows/s | ETA {eta_formatted} | {state}' },
    cliProgress.Presets.shades_classic,
  );
  const newFailures = failureLines();
  let runBar: cliProgress.SingleBar | undefined;
  const partitionBars = new Map<string, cliProgress.SingleBar>();
  return {
    show(s: RunSnapshot) {
      runBar ??= bars.create(s.run.partitions_total, 0, { read: 0, written: 0, rate: 0, state: s.run.status });
      for (const line of newFailures(s)) bars.log(line);
      runBar.update(s.done, { read: s.totals.rowsRead, written: s.totals.rowsWritten, rate: s.rowsPerSecond, state: stateOf(s) });
      const seen = new Set(s.running.map((p) => p.partition_id));
      for (const [id, bar] of partitionBars) {
        if (seen.has(id)) continue;
        bars.remove(bar);
        partitionBars.delete(id);
      }
      for (const p of s.running) {
        const payload = { id: p.partition_id, rows: p.rows_read, chunks: p.chunks, cursor: p.cursor ?? '—', why: p.hold_reason ? ` — ${p.hold_reason}` : '' };
        const bar = partitionBars.get(p.partition_id);
        if (bar) bar.update(0, payload);
        else partitionBars.set(p.partition_id, bars.create(1, 0, payload, { format: '  ↳ {id}: {rows} rows in {chunks} chunks, cursor {cursor}{why}' }));
      }
      if (!s.active) for (const bar of partitionBars.values()) bars.remove(bar);
    },
    stop: () => bars.stop(),
  };
}

function lineView(stream: NodeJS.WriteStream) {
  const started = Date.now();
  const newFailures = failureLines();
  let lastPrint = 0;
  // what each running partition was last said to be waiting for, by kind (a guard's value moving is not news)
  const shownReasons = new Map<string, string>();
  return {
    show(s: RunSnapshot) {
      for (const line of newFailures(s)) stream.write(line);
      for (const p of s.running) {
        const kind = p.hold_reason?.replace(/[\d.,]+/g, '#') ?? '';
        if ((shownReasons.get(p.partition_id) ?? '') === kind) continue;
        stream.write(`partition ${p.partition_id}: ${p.hold_reason ?? 'writing again'}\n`);
        shownReasons.set(p.partition_id, kind);
      }
      const now = Date.now();
      if (now - lastPrint < 5000 && s.active) return;
      lastPrint = now;
      const t = s.totals;
      stream.write(
        `[${Math.round((now - started) / 1000)}s] ${stateOf(s)}: ${s.done}/${t.total} partitions, ${t.rowsRead} rows read, ${t.rowsWritten} written, ${s.rowsPerSecond} rows/s${t.byStatus.failed ? `, ${t.byStatus.failed} failed` : ''}\n`,
      );
    },
    stop: () => undefined,
  };
}
