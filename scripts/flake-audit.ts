/**
 * Runs test files again and again, each in its own jest invocation (its own dev server and
 * PostgreSQL, as CI starts them), optionally beside a competing CPU load, and prints a table of
 * passes and failures per file; the log of every failed invocation is kept. It is how the
 * suite's timing-sensitive files are audited before a change to them lands:
 *
 *   npm run build && npx tsx scripts/flake-audit.ts --runs 10 [--load] [test/rate-limit.test.ts …]
 *
 * --load runs one busy process per core for the whole audit (the machine as CI would see it
 * with a second job on it). Exit code 1 when any invocation failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import { Command, InvalidArgumentError } from 'commander';

/** The files whose assertions lean on time: rates, holds, pause latency, faults, first start. */
const TIMING_SENSITIVE = ['test/rate-limit.test.ts', 'test/guards.test.ts', 'test/control.test.ts', 'test/chaos.test.ts', 'test/first-run.test.ts'];
const ROOT = path.join(__dirname, '..');

interface Outcome {
  file: string;
  round: number;
  passed: number;
  failed: number;
  seconds: number;
  code: number;
  log?: string;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function startLoad(): ChildProcess[] {
  return os.cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) Math.sqrt(Math.random())'], { stdio: 'ignore' }));
}

/** The jest invocation running now, killed with its process group when the audit is interrupted. */
let current: ChildProcess | undefined;

function runFile(file: string, round: number, logDir: string): Promise<Outcome> {
  const began = Date.now();
  return new Promise((resolve) => {
    // its own process group: an interrupted audit takes the dev server and PostgreSQL jest started with it
    const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'jest'), [file], {
      detached: true,
      cwd: ROOT,
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    current = child;
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => {
      const totals =
        output
          .split('\n')
          .filter((l) => l.startsWith('Tests:'))
          .pop() ?? '';
      const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(totals)?.[1] ?? 0);
      const outcome: Outcome = {
        file,
        round,
        passed: count('passed'),
        failed: count('failed'),
        seconds: Math.round((Date.now() - began) / 1000),
        code: code ?? 1,
      };
      if (outcome.code !== 0) {
        outcome.log = path.join(logDir, `${path.basename(file, '.test.ts')}-round${round}.log`);
        writeFileSync(outcome.log, output);
      }
      resolve(outcome);
    });
  });
}

async function main(): Promise<void> {
  const program = new Command('flake-audit')
    .option('--runs <n>', 'invocations of each file', positive, 10)
    .option('--load', 'keep every core busy with a competing process while the files run', false)
    .argument('[files...]', 'test files (default: the timing-sensitive ones)')
    .parse();
  const { runs, load } = program.opts<{ runs: number; load: boolean }>();
  const files = program.args.length > 0 ? program.args : TIMING_SENSITIVE;
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'flake-audit-'));
  const burners = load ? startLoad() : [];
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (current?.pid && current.exitCode === null) process.kill(-current.pid, 'SIGKILL');
      for (const b of burners) b.kill('SIGKILL');
      process.exit(130);
    });
  }
  const outcomes: Outcome[] = [];
  try {
    for (let round = 1; round <= runs; round++) {
      for (const file of files) {
        const outcome = await runFile(file, round, logDir);
        outcomes.push(outcome);
        process.stderr.write(`round ${round}/${runs} ${file}: ${outcome.code === 0 ? 'green' : `RED (${outcome.log})`} in ${outcome.seconds}s\n`);
      }
    }
  } finally {
    for (const b of burners) b.kill('SIGKILL');
  }
  const table = new Table({ head: ['file', 'green runs', 'red runs', 'tests failed', 'seconds (min–max)'] });
  for (const file of files) {
    const mine = outcomes.filter((o) => o.file === file);
    const seconds = mine.map((o) => o.seconds);
    table.push([
      file,
      mine.filter((o) => o.code === 0).length,
      mine.filter((o) => o.code !== 0).length,
      mine.reduce((n, o) => n + o.failed, 0),
      `${Math.min(...seconds)}–${Math.max(...seconds)}`,
    ]);
  }
  process.stdout.write(`${load ? `under a competing load on ${os.cpus().length} cores` : 'alone'}, ${runs} runs each\n${table.toString()}\n`);
  const summary = path.join(logDir, 'outcomes.json');
  writeFileSync(summary, JSON.stringify(outcomes, null, 2));
  process.stdout.write(`outcomes: ${summary}\n`);
  process.exitCode = outcomes.some((o) => o.code !== 0) ? 1 : 0;
}

void main();
