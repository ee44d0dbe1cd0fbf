/**
 * Shell completion as bash runs it: the script `backfill completion bash` prints, sourced after
 * bash-completion (which it builds on), completes a command, a flag and a flag's value by
 * asking the built CLI on PATH. CI installs bash-completion; elsewhere the test says it skipped.
 * A run argument completes the ledger's run and fleet ids, a spec argument spec files.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/db';

const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';
const available = existsSync(BASH_COMPLETION);
if (!available && process.env.CI) throw new Error(`bash-completion not found at ${BASH_COMPLETION}; CI must install it (apt-get install bash-completion)`);
const maybe = available ? test : test.skip;

/** COMPREPLY for the words typed so far, the last one being completed. */
function complete(script: string, bin: string, words: string[]): Promise<string[]> {
  const line = words.join(' ');
  const program = [
    `source ${BASH_COMPLETION}`,
    `source ${script}`,
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE='${line}'`,
    'COMP_POINT=${#COMP_LINE}',
    '__backfill_complete 2>/dev/null',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', program], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } }, (err, stdout) =>
      err ? reject(err) : resolve(stdout.split('\n').filter(Boolean)),
    ),
  );
}

maybe('backfill completion bash: bash completes a command, a flag and a choice from the program itself', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-completion-'));
  // `backfill` on PATH, as an installed CLI is: the script calls it for every completion
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'backfill'), `#!/bin/sh\nexec "${process.execPath}" "${path.resolve(__dirname, '../dist/client.js')}" "$@"\n`);
  chmodSync(path.join(bin, 'backfill'), 0o755);
  const generated = await runCli(['completion', 'bash']);
  expect(generated.code).toBe(0);
  expect(generated.stdout).toContain('complete -F __backfill_complete backfill');
  // the older name prints the same script
  expect((await runCli(['complete', 'bash'])).stdout).toBe(generated.stdout);
  const script = path.join(dir, 'backfill.bash');
  writeFileSync(script, generated.stdout);

  expect(await complete(script, bin, ['backfill', 'parti'])).toEqual(['partitions']);
  expect(await complete(script, bin, ['backfill', 'retry'])).toEqual(['retry-failed']);
  expect(await complete(script, bin, ['backfill', 'partitions', 'r1', '--st'])).toEqual(['--status']);
  expect(await complete(script, bin, ['backfill', 'report', 'r1', '-o', ''])).toEqual(['markdown', 'html', 'json']);
});

test('backfill completion refuses a shell it has no script for', async () => {
  const refused = await runCli(['completion', 'tcsh']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/zsh.*bash.*fish.*powershell/);
});

/** What the script gets back for the words typed so far: one value per line, before the directive line. */
function suggestions(words: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [path.resolve(__dirname, '../dist/client.js'), 'complete', '--', ...words],
      { env: { ...process.env, ...env }, cwd },
      (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').filter((l) => l && !l.startsWith(':')))),
    ),
  );
}

describe('arguments', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('completion');
    expect((await runCli(['migrate', '--database', db.envVar])).code).toBe(0);
    await db.pool.query(
      `INSERT INTO backfill.runs (run_id, name, workflow_id, reason, status, spec, spec_hash, transform_name, transform_version, transform_kind,
                                  transform_hash, database_var, limits, shape, partitions_total, started_by)
       VALUES ('20261205-0900-1234567890abcdef', 'orders-usd', 'backfill/orders-usd/20261205-0900-1234567890abcdef', 'test', 'failed', '{}', 'h',
               'orders-usd', 1, 'sql', 'h', 'X', '{}', '{}', 1, 'test')`,
    );
  });
  afterAll(() => db?.drop());

  test("a run argument completes the ledger's run ids (the line's --database, else DATABASE_URL), with what each is", async () => {
    const run = ['20261205-0900-1234567890abcdef\torders-usd (failed)'];
    expect(await suggestions(['status', '2026'], { DATABASE_URL: db.url })).toEqual(run);
    expect(await suggestions(['retry-failed', '--database', db.envVar, ''], { DATABASE_URL: '' })).toEqual(run);
    expect(await suggestions(['verify', '2025'], { DATABASE_URL: db.url })).toEqual([]);
    // a ledger that does not answer: nothing, at once
    expect(await suggestions(['status', ''], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })).toEqual([]);
  });

  test('a spec argument completes spec files and directories, not other files', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-completion-specs-'));
    writeFileSync(path.join(dir, 'orders.yaml'), '');
    writeFileSync(path.join(dir, 'notes.txt'), '');
    mkdirSync(path.join(dir, 'specs'));
    writeFileSync(path.join(dir, 'specs', 'daily.yml'), '');
    expect(await suggestions(['start', ''], {}, dir)).toEqual(['orders.yaml\t', 'specs/\t']);
    expect(await suggestions(['plan', 'specs/'], {}, dir)).toEqual(['specs/daily.yml\t']);
    expect(await suggestions(['validate', 'o'], {}, dir)).toEqual(['orders.yaml\t']);
  });
});
