/**
 * The temporal CLI's connection flags on every command that reaches Temporal (`--address`,
 * `--namespace`, `--env` for a temporal.toml profile), each winning over its variable; and exit
 * code 3 when a server does not answer, apart from 1 (no) and 2 (bad input). docs/operating.md "Exit codes".
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli';
import { temporalAddress } from './helpers/temporal';

let tmp: string;
let closedPort: number;
let configFile: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-cli-connection-'));
  // a privileged port nothing here listens on: a port found free and let go was once taken, mid-file,
  // by a PostgreSQL another test started, which asked for a password instead of refusing
  closedPort = 1;
  configFile = path.join(tmp, 'temporal.toml');
  writeFileSync(configFile, `[profile.lab]\naddress = "${temporalAddress()}"\nnamespace = "default"\n\n[profile.away]\naddress = "127.0.0.1:${closedPort}"\n`);
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('--address wins over TEMPORAL_ADDRESS; a Temporal that does not answer is exit 3, said with its address', async () => {
  const away = await runCli(['list', '--fleets', '--address', `127.0.0.1:${closedPort}`]);
  expect(away.stderr).toContain(`cannot reach Temporal at 127.0.0.1:${closedPort}`);
  expect(away.code).toBe(3);
  // the same, as -o json says it to a script
  const json = await runCli(['list', '--fleets', '--address', `127.0.0.1:${closedPort}`, '-o', 'json']);
  expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 3 });
  const here = await runCli(['list', '--fleets', '--address', temporalAddress()], { TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` });
  expect(here.code).toBe(0);
}, 60_000);

test('--env picks a temporal.toml profile; --address still wins over it; --namespace names another namespace', async () => {
  const env = { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_ADDRESS: '' };
  expect((await runCli(['list', '--fleets', '--env', 'lab'], env)).code).toBe(0);
  const away = await runCli(['list', '--fleets', '--env', 'away'], env);
  expect(away.code).toBe(3);
  expect(away.stderr).toContain(`127.0.0.1:${closedPort}`);
  expect((await runCli(['list', '--fleets', '--env', 'away', '--address', temporalAddress()], env)).code).toBe(0);
  const elsewhere = await runCli(['list', '--fleets', '--env', 'lab', '--namespace', 'no-such-namespace'], env);
  expect(elsewhere.code).not.toBe(0);
  expect(elsewhere.stderr).toContain('no-such-namespace');
}, 60_000);

test('a ledger database that does not answer is exit 3, for status and verify alike; a run it does not hold is 2', async () => {
  const nowhere = { DATABASE_URL: `postgres://nobody@127.0.0.1:${closedPort}/none` };
  for (const args of [
    ['status', '20261202-0301-9f3ab2c47e01d65b'],
    ['verify', '20261202-0301-9f3ab2c47e01d65b'],
  ]) {
    const r = await runCli(args, nowhere);
    expect(r.stderr).toMatch(/ECONNREFUSED|connect/);
    expect(r.code).toBe(3);
  }
  expect((await runCli(['status', 'no-such-run'], { DATABASE_URL: process.env.DATABASE_URL ?? '' })).code).toBe(2);
}, 60_000);

test('commands that never reach Temporal do not take its flags', async () => {
  const r = await runCli(['validate', 'spec.yaml', '--address', '127.0.0.1:7233']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/unknown option '--address'/);
});
