/**
 * Temporal's production server and its schema tool, the version docker-compose.yml deploys,
 * built here with `go install` from the Go module proxy and cached outside the clone like the
 * CLI (the schemas, which ship in the module's source, are copied beside them); and its two
 * PostgreSQL databases set up by deploy/temporal-schema.sh, the script compose runs.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { copyFromModule, goInstall } from './go-install';
import { cacheDir, projectRoot } from './paths';

const run = promisify(execFile);

/** The version docker-compose.yml's temporalio/server image pins (test/compose.test.ts holds them equal). */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const MODULE = 'go.temporal.io/server';

export interface ServerBinaries {
  server: string;
  sqlTool: string;
  /** schema/postgresql/v12 of the module: temporal/ and visibility/, versioned. */
  schemaDir: string;
}

function home(): string {
  return path.join(cacheDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function cachedServerBinaries(): ServerBinaries | undefined {
  const found = { server: path.join(home(), 'bin', 'server'), sqlTool: path.join(home(), 'bin', 'sql'), schemaDir: path.join(home(), 'schema') };
  return existsSync(found.server) && existsSync(found.sqlTool) && existsSync(path.join(found.schemaDir, 'temporal')) ? found : undefined;
}

/** The cached server and schema tool, or a `go install` of both (minutes, the first time on a machine). */
export async function ensureTemporalServer(say: (line: string) => void = () => undefined): Promise<ServerBinaries> {
  const cached = cachedServerBinaries();
  if (cached) return cached;
  say(`Building the Temporal server ${TEMPORAL_SERVER_VERSION} and its schema tool with go install (first time only; several minutes)…`);
  const started = Date.now();
  const tick = setInterval(() => say(`  still building the Temporal server (${Math.round((Date.now() - started) / 1000)} s)…`), 30_000);
  try {
    await goInstall(
      [`${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`, `${MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`],
      path.join(home(), 'bin'),
      `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
    );
    // the schemas ship in the module source, not in the binaries: keep them beside the binaries
    await copyFromModule(`${MODULE}@${TEMPORAL_SERVER_VERSION}`, path.join('schema', 'postgresql', 'v12'), path.join(home(), 'schema'));
  } finally {
    clearInterval(tick);
  }
  const built = cachedServerBinaries();
  if (!built) throw new Error(`go install finished but ${home()} lacks the server, the schema tool or the schemas`);
  say(`Temporal server built: ${built.server}`);
  return built;
}

export interface PostgresAccess {
  host: string;
  port: number;
  user: string;
  password?: string;
}

/** Creates and migrates the two databases with the script docker-compose runs. */
export async function setupTemporalDatabases(binaries: ServerBinaries, pg: PostgresAccess, databases: { main: string; visibility: string }): Promise<void> {
  await run('/bin/sh', [path.join(projectRoot(), 'deploy', 'temporal-schema.sh')], {
    env: {
      ...process.env,
      PG_HOST: pg.host,
      PG_PORT: String(pg.port),
      PG_USER: pg.user,
      PG_PASSWORD: pg.password ?? '',
      TEMPORAL_DB: databases.main,
      VISIBILITY_DB: databases.visibility,
      SQL_TOOL: binaries.sqlTool,
      SCHEMA_DIR: binaries.schemaDir,
    },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** Host, port and credentials of a postgres:// URL, for the server's config and the schema tool. */
export function postgresAccess(url: string): PostgresAccess {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username) || 'postgres',
    password: decodeURIComponent(u.password) || undefined,
  };
}
