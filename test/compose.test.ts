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
  build?: string;
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
  // the ledger is migrated by its owner, the user the database was created with
  expect(ledger.command).toEqual(['migrate', '--database', 'DATABASE_URL']);
  expect(new URL(String(ledger.environment!.DATABASE_URL)).username).toBe(compose.services.postgresql.environment!.POSTGRES_USER);
});

test('the worker service scales with --scale worker=N and runs the entry point the tests run', () => {
  const { worker } = compose.services;
  // a fixed container name or a published port would make the second replica fail to start
  expect(worker.container_name).toBeUndefined();
  expect(worker.ports).toBeUndefined();
  expect(worker.build).toBe('.');
  expect(worker.command).toEqual(['worker']);
  expect(worker.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233', BACKFILL_DATABASES: 'DATABASE_URL' });
  expect(worker.depends_on?.['temporal-setup-namespace']).toEqual({ condition: 'service_completed_successfully' });
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "dist\/client\.js"\]$/m);
});
