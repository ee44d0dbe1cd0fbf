import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { temporalAddress } from './temporal';

const CLI = path.resolve(__dirname, '../../dist/client.js');

/** The built CLI in its own process, as an operator runs it; never throws. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), LOG_LEVEL: 'warn', ...env }, maxBuffer: 20 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The built CLI on a pseudo-terminal (util-linux `script`), as an operator at a prompt runs it:
 * `answer` is typed once the command asks. Output arrives merged, as a terminal shows it.
 */
export function runCliOnTerminal(args: string[], answer: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let answered = false;
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      // typed when the question is on the screen, as a person would
      if (!answered && output.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\n`);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
