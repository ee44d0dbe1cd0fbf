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
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CASES, LONG_RUN_STALL_LIMIT_SECONDS, faultTable, type CaseResult } from './chaos/fault-matrix';
import { startsFirst } from './helpers/turns';

startsFirst('five minutes of faults, each waited out on servers of its own: the other slot works through the suite meanwhile');

const ROOT = path.join(__dirname, '..');
/** The worker processes' warnings and errors, for the failure message: on CI they are the only trace of why a run hung. */
const WORKER_LOG = path.join(mkdtempSync(path.join(os.tmpdir(), 'backfill-chaos-log-')), 'workers.log');

let matrix: ChildProcess | undefined;

/** The matrix in a process group of its own, so that its workers, servers and PostgreSQL can be stopped with it. */
function runMatrix(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [path.join(ROOT, 'test', 'chaos', 'fault-matrix.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        CHAOS_WORKER_LOG: WORKER_LOG,
        LOG_LEVEL: 'warn',
        CHAOS_ROWS: '20000',
        CHAOS_RUN_SECONDS: '8',
        CHAOS_OUTPUT: 'json',
        CHAOS_LONG_KILL_SECONDS: '20',
        CHAOS_LONG_PARTITIONS: '300',
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    matrix = child;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

// a matrix cut short by jest's timeout must not go on loading the machine under the files after it
afterAll(() => {
  if (matrix?.pid !== undefined && matrix.exitCode === null) {
    try {
      process.kill(-matrix.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

test(
  'every fault of the matrix ends with the exact target, a consistent ledger and no crashed worker',
  async () => {
    const { code, stdout, stderr } = await runMatrix();
    const line = stdout.trim().split('\n').pop() ?? '';
    if (!line.startsWith('[')) throw new Error(`the chaos script ended with ${code} and no results:\n${stderr.slice(-6000)}${workerLogTail()}`);
    const results = JSON.parse(line) as CaseResult[];
    process.stderr.write(`${faultTable(results)}\n`);
    if (results.some((r) => r.status !== 'succeeded')) process.stderr.write(`${stderr.slice(-6000)}${workerLogTail()}\n`);
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
      // a run that ends succeeded after waiting out a ten-minute bound has still failed its operator
      expect(r.longestStallSeconds ?? 0).toBeLessThan(LONG_RUN_STALL_LIMIT_SECONDS);
    }
    expect(code).toBe(0);
  },
  30 * 60_000,
);

function workerLogTail(): string {
  if (!existsSync(WORKER_LOG)) return '';
  return `\nthe workers' last warnings and errors (${WORKER_LOG}):\n${readFileSync(WORKER_LOG, 'utf8').slice(-4000)}`;
}
