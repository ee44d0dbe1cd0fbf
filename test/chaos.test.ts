/**
 * The fault matrix (bench/chaos.ts, `npm run chaos`) at a small size: each fault hits a real
 * backfill mid-run — workers SIGKILLed ten times, the Temporal server killed and restarted on
 * its file, PostgreSQL restarted in immediate mode, backends terminated, the network to the
 * database and to Temporal cut, the target locked, the disk full — and each run must end
 * succeeded with a target identical to the one-statement reference and a consistent ledger.
 * It brings its own PostgreSQL and dev server (it restarts them), beside the suite's.
 */
import { CASES, faultTable, runChaos } from '../bench/chaos';

test('every fault of the matrix ends with the exact target and a consistent ledger', async () => {
  const results = await runChaos({ rows: 20_000, runSeconds: 8, say: () => undefined });
  process.stderr.write(`${faultTable(results)}\n`);
  expect(results.map((r) => r.fault)).toEqual([...CASES]);
  for (const r of results) {
    expect({ fault: r.fault, status: r.status, missing: r.missing, extra: r.extra, ledger: r.ledgerProblems, crashes: r.workerCrashes }).toEqual({
      fault: r.fault,
      status: 'succeeded',
      missing: 0,
      extra: 0,
      ledger: [],
      crashes: 0,
    });
  }
}, 20 * 60_000);
