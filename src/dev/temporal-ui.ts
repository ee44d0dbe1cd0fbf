/**
 * The Temporal Web UI as docker-compose.yml deploys it (temporalio/ui), for a production server:
 * its Go server built with `go install` from the Go module proxy at the image's version and cached
 * beside the Temporal server, and run with the image's own templated config (docker.yaml, read
 * from the module) and the environment variables compose sets.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { pollUntil } from '../util/poll-until';
import { copyFromModule, goInstall } from './go-install';
import { cacheDir } from './paths';
import { stopOnExit } from './shutdown';
import { ExitedWhileStarting, freePort, onFreshPorts } from './free-port';
import { logEnd, outputSince } from './startup-output';

/** The version of docker-compose.yml's temporalio/ui image (test/compose.test.ts holds them equal). */
export const TEMPORAL_UI_VERSION = 'v2.42.1';
const MODULE = 'github.com/temporalio/ui-server/v2';

export interface UiBinaries {
  server: string;
  /** The module's config/ folder: docker.yaml reads TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, … */
  configDir: string;
}

function home(): string {
  return path.join(cacheDir(), `temporal-ui-${TEMPORAL_UI_VERSION}`);
}

export function cachedUi(): UiBinaries | undefined {
  const found = { server: path.join(home(), 'bin', 'server'), configDir: path.join(home(), 'config') };
  return existsSync(found.server) && existsSync(path.join(found.configDir, 'docker.yaml')) ? found : undefined;
}

/** The cached UI server, or a `go install` of it (a minute or two the first time; the UI's assets are embedded). */
export async function ensureTemporalUi(say: (line: string) => void = () => undefined): Promise<UiBinaries> {
  const cached = cachedUi();
  if (cached) return cached;
  say(`Building the Temporal Web UI server ${TEMPORAL_UI_VERSION} with go install (first time only)…`);
  try {
    await goInstall([`${MODULE}/cmd/server@${TEMPORAL_UI_VERSION}`], path.join(home(), 'bin'), `the Temporal Web UI server ${TEMPORAL_UI_VERSION}`);
    // the image's templated config ships in the module source
    mkdirSync(path.join(home(), 'config'), { recursive: true });
    await copyFromModule(`${MODULE}@${TEMPORAL_UI_VERSION}`, path.join('config', 'docker.yaml'), path.join(home(), 'config', 'docker.yaml'));
  } catch (err) {
    throw new Error(`building the Temporal Web UI server ${TEMPORAL_UI_VERSION} failed: ${(err as Error).message}`);
  }
  const built = cachedUi();
  if (!built) throw new Error(`go install finished but ${home()} lacks the UI server or its config`);
  return built;
}

export interface RunningUi {
  url: string;
  stop(): Promise<void>;
}

/**
 * The UI server against a Temporal frontend, on a free port; resolves once it serves its page.
 * A server that exits while starting is started again on another port (free-port.ts says why).
 */
export async function startTemporalUi(
  binaries: UiBinaries,
  temporalAddress: string,
  root: string,
  options: { say?: (line: string) => void; choosePort?: () => Promise<number> } = {},
): Promise<RunningUi> {
  const choosePort = options.choosePort ?? freePort;
  return onFreshPorts(async () => startUiOnce(binaries, temporalAddress, root, await choosePort()), {
    portsAreOurs: true,
    say: options.say,
    again: 'starting it again on another port',
  });
}

async function startUiOnce(binaries: UiBinaries, temporalAddress: string, root: string, port: number): Promise<RunningUi> {
  const logFile = path.join(root, 'ui.log');
  const logStart = logEnd(logFile);
  const log = openSync(logFile, 'a');
  const child = spawn(binaries.server, ['--root', path.dirname(binaries.configDir), '--config', 'config', '--env', 'docker', 'start'], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_UI_PORT: String(port), TEMPORAL_CORS_ORIGINS: `http://127.0.0.1:${port}` },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const unregister = stopOnExit(stop);
  const url = `http://127.0.0.1:${port}`;
  const served = await pollUntil(
    async () =>
      child.exitCode !== null
        ? false
        : (await fetch(url)
            .then((r) => r.ok)
            .catch(() => false)) || undefined,
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  if (served !== true) {
    const exited = child.exitCode !== null;
    await stop();
    unregister();
    if (exited) {
      throw new ExitedWhileStarting(
        `the Temporal Web UI server exited (${child.exitCode}) while starting on ${url}: ${outputSince(logFile, logStart).reason()}; its log: ${logFile}`,
      );
    }
    throw new Error(`the Temporal Web UI server did not serve on ${url} within 30 s; its log: ${logFile}`);
  }
  return {
    url,
    async stop() {
      await stop();
      unregister();
    },
  };
}
