/**
 * docker-compose.yml cannot be brought up here (no container engine), so it is checked the way
 * an engine would read it: against the Compose Specification's JSON schema (dclint bundles the
 * current one; Debian's docker-compose 1.29 predates it), and for what the deployment relies on:
 * Temporal on PostgreSQL with its schema set up first, a current Web UI, and a worker service
 * that scales with `--scale worker=N`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { TEMPORAL_SERVER_VERSION } from '../src/dev/temporal-server-build';
import { TEMPORAL_UI_VERSION } from '../src/dev/temporal-ui';

const ROOT = path.join(__dirname, '..');
const DCLINT = path.join(ROOT, 'node_modules', '.bin', 'dclint');
const composeText = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');

interface Service {
  image?: string;
  build?: string | { context: string; args?: Record<string, string> };
  restart?: string;
  pull_policy?: string;
  profiles?: string[];
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
  command?: string[];
  entrypoint?: string[];
  volumes?: string[];
  container_name?: string;
  ports?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(composeText) as { name?: string; services: Record<string, Service> };

/** dclint's verdict on a compose document: exit code and output. */
function lint(text: string): { code: number; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backfill-compose-'));
  const file = path.join(dir, 'docker-compose.yml');
  writeFileSync(file, text);
  try {
    const output = execFileSync(DCLINT, [file, '-c', path.join(ROOT, '.dclintrc')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, output: output.trim() };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

test('docker-compose.yml is valid against the Compose Specification, with no lint finding', () => {
  expect(lint(composeText)).toEqual({ code: 0, output: '' });
});

test('the validator is not a rubber stamp: an unknown key and a wrong type are errors', () => {
  const unknown = parse(composeText);
  unknown.services.worker.replicaz = 3;
  expect(lint(stringify(unknown))).toMatchObject({
    code: 1,
    output: expect.stringMatching(/services\/worker.*must NOT have additional properties.*invalid-schema/s),
  });
  const wrongType = parse(composeText);
  wrongType.services.worker.depends_on = 'temporal';
  expect(lint(stringify(wrongType))).toMatchObject({ code: 1, output: expect.stringMatching(/invalid-schema/) });
});

test('Temporal runs on PostgreSQL with its schema set up first, beside a Web UI of 2.42 or newer', () => {
  const { temporal, 'temporal-admin-tools': admin, 'temporal-ui': ui } = compose.services;
  expect(temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
  expect(temporal.depends_on?.['temporal-admin-tools']).toEqual({ condition: 'service_completed_successfully' });
  expect(admin.depends_on?.postgresql).toEqual({ condition: 'service_healthy' });
  // the schema steps are one script, mounted here and run by the production-server tier too
  expect(admin.entrypoint).toEqual(['/bin/sh', '/deploy/temporal-schema.sh']);
  expect(admin.volumes).toContain('./deploy:/deploy:ro');
  expect(readFileSync(path.join(ROOT, 'deploy', 'temporal-schema.sh'), 'utf8')).toMatch(
    /setup-schema -v 0\.0[\s\S]*update-schema -d "\$SCHEMA_DIR\/\$schema\/versioned"/,
  );
  // the production-server test tier builds the version compose deploys
  expect(`v${temporal.image!.split(':')[1]}`).toBe(TEMPORAL_SERVER_VERSION);
  // and the Web UI server it builds is the image's version (2.42 or newer: User Metadata)
  expect(`v${ui.image!.split(':')[1]}`).toBe(TEMPORAL_UI_VERSION);
  const [major, minor] = TEMPORAL_UI_VERSION.slice(1).split('.').map(Number);
  expect(major > 2 || (major === 2 && minor >= 42)).toBe(true);
  expect(compose.name).toBe('backfill');
});

test('the worker connects as the least-privilege role deploy/worker-role.sql makes after the ledger is migrated, and refuses anything more powerful', () => {
  const { worker, 'backfill-ledger': ledger, 'backfill-worker-role': role } = compose.services;
  expect(worker.environment).toMatchObject({ BACKFILL_REQUIRE_LEAST_PRIVILEGE: '1' });
  expect(new URL(String(worker.environment!.DATABASE_URL)).username).toBe('backfill_worker');
  expect(worker.depends_on?.['backfill-worker-role']).toEqual({ condition: 'service_completed_successfully' });
  expect(role.depends_on?.['backfill-ledger']).toEqual({ condition: 'service_completed_successfully' });
  expect(role.command).toEqual(expect.arrayContaining(['--set=role=backfill_worker', '--file=/deploy/worker-role.sql', '--set=ON_ERROR_STOP=1']));
  expect(role.volumes).toContain('./deploy:/deploy:ro');
  // the ledger is migrated by the application database's owner: not the superuser, not Temporal's role
  expect(ledger.command).toEqual(['migrate', '--database', 'DATABASE_URL']);
  expect(new URL(String(ledger.environment!.DATABASE_URL)).username).toBe('backfill_owner');
  const init = readFileSync(path.join(ROOT, 'deploy', 'postgres-init.sh'), 'utf8');
  expect(init).toContain('ALTER DATABASE backfill OWNER TO backfill_owner;');
  expect(init).toMatch(/CREATE ROLE temporal LOGIN CREATEDB PASSWORD/);
  expect(compose.services.postgresql.volumes).toContain('./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/10-roles.sh:ro');
  expect(compose.services.temporal.environment).toMatchObject({ POSTGRES_USER: 'temporal' });
  expect(compose.services['temporal-admin-tools'].environment).toMatchObject({ PG_USER: 'temporal' });
});

test('the worker service scales with --scale worker=N and runs the entry point the tests run', () => {
  const { worker } = compose.services;
  // a fixed container name or a published port would make the second replica fail to start
  expect(worker.container_name).toBeUndefined();
  expect(worker.ports).toBeUndefined();
  expect(worker.build).toBeUndefined();
  expect(worker.command).toEqual(['worker']);
  expect(worker.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233', BACKFILL_DATABASES: 'DATABASE_URL' });
  expect(worker.depends_on?.['temporal-setup-namespace']).toEqual({ condition: 'service_completed_successfully' });
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "dist\/client\.js"\]$/m);
});

test('every long-running service restarts by itself; every health check asks the service, not a port', () => {
  const longRunning = Object.entries(compose.services).filter(([, s]) => s.restart !== 'no' && !s.command?.includes('--version'));
  expect(longRunning.map(([name]) => name).sort()).toEqual(['codec-server', 'postgresql', 'temporal', 'temporal-ui', 'worker']);
  for (const [, service] of longRunning) expect(service.restart).toBe('unless-stopped');
  const checks = Object.values(compose.services).flatMap((s) => (s.healthcheck ? [s.healthcheck.test.join(' ')] : []));
  expect(checks.length).toBeGreaterThanOrEqual(4);
  for (const check of checks) expect(check).not.toMatch(/\bnc\b|\/dev\/tcp/);
  expect(compose.services.temporal.healthcheck!.test).toEqual(['CMD', 'temporal', 'operator', 'cluster', 'health', '--address', '127.0.0.1:7233']);
  expect(compose.services.worker.healthcheck!.test.join(' ')).toContain('9464/metrics');
  // a worker's SIGTERM lets the chunk in flight commit: compose's default 10 s would cut it off
  expect(compose.services.worker.stop_grace_period).toBe('2m');
});

// PostgreSQL's releases are major.minor; everything else here major.minor.patch
test('every image is pinned to an exact version, and the Backfill image is built once, by one service', () => {
  for (const [name, service] of Object.entries(compose.services)) {
    expect([name, service.image]).toEqual([name, expect.stringMatching(/^[a-z0-9/._-]+:\d+\.\d+(\.\d+)?(-[a-z0-9.-]+)?$/)]);
  }
  const builders = Object.entries(compose.services).filter(([, s]) => s.build);
  expect(builders.map(([name]) => name)).toEqual(['worker-image']);
  const image = compose.services['worker-image'].image;
  for (const name of ['worker', 'backfill-ledger', 'codec-server']) {
    expect(compose.services[name]).toMatchObject({ image, pull_policy: 'never' });
  }
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^USER node$/m);
  expect(dockerfile).toMatch(/^FROM node:24\.\d+\.\d+-bookworm-slim/m);
  // the image's version is the package's
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(image).toBe(`backfill:${pkg.version}`);
});

test('no default password: every secret comes from .env, and compose refuses to start while one is empty', () => {
  expect(composeText).not.toMatch(/PASSWORD[^\n]*:-/);
  for (const secret of ['POSTGRES_PASSWORD', 'TEMPORAL_DB_PASSWORD', 'BACKFILL_OWNER_PASSWORD', 'BACKFILL_WORKER_PASSWORD']) {
    expect(composeText).toContain(`\${${secret}:?set ${secret} in .env`);
    expect(readFileSync(path.join(ROOT, 'deploy', 'compose.env.example'), 'utf8')).toMatch(new RegExp(`^${secret}=$`, 'm'));
  }
});

test('search attributes are created only where missing, and a failure fails the set-up loudly', () => {
  const setup = compose.services['temporal-setup-namespace'];
  expect(setup.entrypoint).toEqual(['/bin/sh', '/deploy/temporal-namespace.sh']);
  const script = readFileSync(path.join(ROOT, 'deploy', 'temporal-namespace.sh'), 'utf8');
  expect(script).toMatch(/^set -eu$/m);
  expect(script).not.toMatch(/search-attribute create[^\n]*\|\| true/);
  for (const name of ['BackfillName', 'BackfillRunId', 'BackfillStatus', 'BackfillPercent', 'BackfillRowsWritten']) expect(script).toContain(name);
});

test('Worker Versioning, payload encryption and an optional codec server are wired', () => {
  expect(compose.services.worker.environment).toMatchObject({
    BACKFILL_BUILD_ID: '${BACKFILL_BUILD_ID:-}',
    BACKFILL_PAYLOAD_KEY: '${BACKFILL_PAYLOAD_KEY:-}',
  });
  const codec = compose.services['codec-server'];
  expect(codec.profiles).toEqual(['codec']);
  expect(codec.command?.[0]).toBe('codec-server');
  expect(codec.environment).toMatchObject({ BACKFILL_PAYLOAD_KEY: '${BACKFILL_PAYLOAD_KEY:-}' });
});
