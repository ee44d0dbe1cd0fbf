/**
 * How the production Temporal server, its schema tool and the Web UI server are built here:
 * `go install` into a folder of the cache, and what ships only in a module's source (schemas, a
 * config) copied out beside the binaries.
 */
import { execFile } from 'node:child_process';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Builds `module/cmd/…@version` targets into `bin`; says what to install when Go is missing. */
export async function goInstall(targets: string[], bin: string, what: string): Promise<void> {
  try {
    await run('go', ['version']);
  } catch {
    throw new Error(`building ${what} needs Go and the Go module proxy; install Go (https://go.dev/dl) and try again`);
  }
  await run('go', ['install', ...targets], {
    env: { ...process.env, GOBIN: bin, CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Copies a file or folder of a module's source (`module@version`) to `to`, writable: the module cache is read-only. */
export async function copyFromModule(moduleAtVersion: string, from: string, to: string): Promise<void> {
  const { stdout } = await run('go', ['mod', 'download', '-json', moduleAtVersion], { env: { ...process.env, GOFLAGS: '-mod=mod' } });
  const moduleDir = (JSON.parse(stdout) as { Dir: string }).Dir;
  cpSync(path.join(moduleDir, from), to, { recursive: true });
  await run('chmod', ['-R', 'u+w', to]);
}
