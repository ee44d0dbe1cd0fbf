/**
 * Shell completion as bash runs it: the script `backfill complete bash` prints, sourced after
 * bash-completion (which it builds on), completes a command, a flag and a flag's value by
 * asking the built CLI on PATH. CI installs bash-completion; elsewhere the test says it skipped.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli';

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

maybe('backfill complete bash: bash completes a command, a flag and a choice from the program itself', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-completion-'));
  // `backfill` on PATH, as an installed CLI is: the script calls it for every completion
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'backfill'), `#!/bin/sh\nexec "${process.execPath}" "${path.resolve(__dirname, '../dist/client.js')}" "$@"\n`);
  chmodSync(path.join(bin, 'backfill'), 0o755);
  const generated = await runCli(['complete', 'bash']);
  expect(generated.code).toBe(0);
  expect(generated.stdout).toContain('complete -F __backfill_complete backfill');
  const script = path.join(dir, 'backfill.bash');
  writeFileSync(script, generated.stdout);

  expect(await complete(script, bin, ['backfill', 'parti'])).toEqual(['partitions']);
  expect(await complete(script, bin, ['backfill', 'retry'])).toEqual(['retry-failed']);
  expect(await complete(script, bin, ['backfill', 'partitions', 'r1', '--st'])).toEqual(['--status']);
  expect(await complete(script, bin, ['backfill', 'report', 'r1', '-o', ''])).toEqual(['markdown', 'html', 'json']);
});

test('backfill complete refuses a shell it has no script for', async () => {
  const refused = await runCli(['complete', 'tcsh']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/zsh.*bash.*fish.*powershell/);
});
