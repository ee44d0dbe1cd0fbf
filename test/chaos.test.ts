/**
 * The fault matrix (test/chaos/fault-matrix.ts, `npm run chaos`) at a small size: each fault hits a real
 * backfill mid-run — workers SIGKILLed ten times, the Temporal server killed and restarted on
 * its file, PostgreSQL restarted in immediate mode, backends terminated, the network to the
 * database and to Temporal cut and stalled, the target locked, chunks past their statement
 * timeout, deadlocks against an application transaction, the disk full, and a long run of 300
 * partitions (1,000 in `npm run chaos`) through closed hours, three continue-as-new generations and worker kills — and each run must
 * end succeeded with a target identical to the one-statement reference, a consistent ledger and
 * no worker process lost on its own. It runs in its own process with its own PostgreSQL and
 * dev server (it restarts them), beside the suite's.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { CASES, faultTable, type CaseResult } from './chaos/fault-matrix';
import { startsFirst } from './helpers/turns';

startsFirst('five minutes of faults, each waited out on servers of its own: the other slot works through the suite meanwhile');

const ROOT = path.join(__dirname, '..');

function runMatrix(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [path.join(ROOT, 'test', 'chaos', 'fault-matrix.ts')],
      {
        cwd: ROOT,
        env: { ...process.env, CHAOS_ROWS: '20000', CHAOS_RUN_SECONDS: '8', CHAOS_OUTPUT: 'json', CHAOS_LONG_KILL_SECONDS: '20', CHAOS_LONG_PARTITIONS: '300' },
        maxBuffer: 20 * 1024 * 1024,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test(
  'every fault of the matrix ends with the exact target, a consistent ledger and no crashed worker',
  async () => {
    const { code, stdout, stderr } = await runMatrix();
    const line = stdout.trim().split('\n').pop() ?? '';
    if (!line.startsWith('[')) throw new Error(`the chaos script ended with ${code} and no results:\n${stderr.slice(-3000)}`);
    const results = JSON.parse(line) as CaseResult[];
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
    expect(code).toBe(0);
  },
  30 * 60_000,
);
