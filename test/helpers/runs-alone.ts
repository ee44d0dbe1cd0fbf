/**
 * Integration files run two at a time. A file whose assertions lean on wall time (a rate, a
 * pause's latency, a latency guard) or that keeps both cores busy by itself (the chaos matrix)
 * says so at its top with `runsAlone(reason)`: test/setup/take-turns.ts then gives it the test
 * server's turn lock exclusively, so no other file runs beside it.
 */
const FLAG = '__backfillRunsAlone';

export function runsAlone(reason: string): void {
  (globalThis as Record<string, unknown>)[FLAG] = reason;
}

export function runsAloneBecause(): string | undefined {
  return (globalThis as Record<string, unknown>)[FLAG] as string | undefined;
}
