import { execFile } from 'node:child_process';
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
