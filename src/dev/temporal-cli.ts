/**
 * Finds or obtains the Temporal CLI (dev server + Web UI), in this order:
 * $TEMPORAL_CLI, `temporal` on PATH, the cached copy, then the SDK's own download
 * (seconds, needs internet), then `go install` of the CLI (minutes, needs Go and the Go
 * module proxy). The result is cached outside the clone.
 */
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, copyFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheDir, TEMPORAL_CLI_VERSION } from './paths';

const run = promisify(execFile);

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export function cachedCliPath(): string {
  return path.join(cacheDir(), 'bin', 'temporal');
}

export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TEMPORAL_CLI) {
    if (!executable(env.TEMPORAL_CLI)) throw new Error(`TEMPORAL_CLI=${env.TEMPORAL_CLI} is not an executable file; fix or unset it`);
    return env.TEMPORAL_CLI;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, 'temporal'))) return path.join(dir, 'temporal');
  }
  return executable(cachedCliPath()) ? cachedCliPath() : undefined;
}

export async function ensureTemporalCli(say: (line: string) => void = () => undefined): Promise<string> {
  const found = findTemporalCli();
  if (found) return found;
  mkdirSync(path.dirname(cachedCliPath()), { recursive: true });

  say('Temporal CLI not found; trying the Temporal SDK download (needs internet)…');
  try {
    const downloaded = await downloadWithSdk();
    copyFileSync(downloaded, cachedCliPath());
    say(`Temporal CLI downloaded to ${cachedCliPath()}`);
    return cachedCliPath();
  } catch (err) {
    say(`  download failed: ${(err as Error).message.split('\n')[0]}`);
  }

  say(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (first time only; this takes several minutes)…`);
  try {
    await run('go', ['version']);
  } catch {
    throw new Error(
      'cannot obtain the Temporal CLI: no download (no internet?) and no Go toolchain. Install it from https://docs.temporal.io/cli and put `temporal` on PATH, or set TEMPORAL_CLI',
    );
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn('go', ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: path.dirname(cachedCliPath()), CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let lines = 0;
    const tick = setInterval(() => say(`  still building the Temporal CLI (${lines} modules fetched so far)…`), 30_000);
    child.stderr.on(
      'data',
      (d: Buffer) =>
        (lines += d
          .toString()
          .split('\n')
          .filter((l) => l.startsWith('go: downloading')).length),
    );
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(tick);
      if (code === 0) resolve();
      else reject(new Error(`go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION} exited with ${code}`));
    });
  });
  say(`Temporal CLI built: ${cachedCliPath()}`);
  return cachedCliPath();
}

/** Lets the SDK fetch its pinned CLI into our cache, then returns the binary it left there. */
async function downloadWithSdk(): Promise<string> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const downloadDir = path.join(cacheDir(), 'sdk-download');
  mkdirSync(downloadDir, { recursive: true });
  const env = await withTimeout(TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'cached-download', downloadDir } } }), 120_000);
  await env.teardown();
  const binary = findBinary(downloadDir);
  if (!binary) throw new Error(`the SDK download left no temporal binary in ${downloadDir}`);
  return binary;
}

function findBinary(dir: string): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = findBinary(full);
      if (inner) return inner;
    } else if (entry.name.startsWith('temporal') && executable(full)) {
      return full;
    }
  }
  return undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms / 1000}s`)), ms).unref())]);
}
