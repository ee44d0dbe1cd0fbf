/**
 * Health guards: signals read before every chunk, each compared with a soft and a hard
 * threshold. Over soft, the partition slows (AIMD: each soft reading halves the share of time
 * it spends writing, each clear one gives a tenth back);
 * over hard, it holds until the signal recovers; held longer than holdTimeoutSeconds, the
 * run pauses itself and waits for an operator. Committed progress is never lost.
 * Workflow-safe types and the pure decision; the SQL that reads each signal is in
 * src/engine/guard-signals.ts.
 */

export interface Threshold {
  /** Over this, slow down. */
  soft?: number;
  /** Over this, hold. */
  hard?: number;
}

export interface GuardsSpec {
  /** Seconds of replay lag of the slowest replica (pg_stat_replication). */
  replicationLagSeconds?: Threshold;
  /** Connections in use as a fraction of max_connections. */
  activeConnectionsRatio?: Threshold;
  /** Sessions waiting for a lock on the target table (other than this backfill). */
  lockWaits?: Threshold;
  /** Vacuums running on the target table, autovacuum or manual (0 or 1). */
  autovacuum?: Threshold;
  /**
   * Milliseconds a durable one-row commit takes (the engine's own, in the ledger): what every
   * application write waits for, and what a backfill's WAL makes slower first.
   */
  commitMs?: Threshold;
  /** Milliseconds a probe query takes, e.g. a primary-key read production relies on. */
  probeMs?: Threshold & { sql: string };
  /** Any SQL returning one number. */
  custom?: (Threshold & { name: string; sql: string })[];
  /** Held longer than this, the run pauses itself. Default 600. */
  holdTimeoutSeconds?: number;
}

export interface GuardReading {
  guard: string;
  value: number;
  level: 'ok' | 'soft' | 'hard';
  threshold?: number;
}

export function levelOf(value: number, t: Threshold): GuardReading['level'] {
  if (t.hard !== undefined && value > t.hard) return 'hard';
  if (t.soft !== undefined && value > t.soft) return 'soft';
  return 'ok';
}

/** The reading that governs: the worst level, then the first in spec order. */
export function governing(readings: GuardReading[]): GuardReading | undefined {
  return readings.find((r) => r.level === 'hard') ?? readings.find((r) => r.level === 'soft');
}

export function describeReading(r: GuardReading): string {
  return `${r.guard} ${Number.isInteger(r.value) ? r.value : r.value.toFixed(2)} > ${r.level} ${r.threshold}`;
}
