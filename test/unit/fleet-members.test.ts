import { fleetSpecSchema } from '../../src/fleet/fleet-schema';
import { assignWaves, fleetMembers } from '../../src/fleet/members';

const fleet = (extra: object = {}) =>
  fleetSpecSchema.parse({
    name: 'orders-usd',
    reason: 'recompute amount_usd',
    databases: ['US_DB', 'TENANT_*'],
    source: { table: 'app.orders', key: 'id' },
    partition: { by: 'range', column: 'id', size: 1000 },
    transform: { name: 't', version: 1, sql: 'SELECT c.id FROM chunk c' },
    target: { table: 'app.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 500, concurrency: 4 },
    ...extra,
  });
const env = { US_DB: 'postgres://us', TENANT_B: 'postgres://b', TENANT_A: 'postgres://a', TENANT_C: '', OTHER: 'x' };

test('members: names as listed, families in name order, unset family members left out; each a spec of its own', () => {
  const m = fleetMembers(fleet(), env);
  expect(m.ok && m.members.map((x) => [x.variable, x.wave, x.spec.database])).toEqual([
    ['US_DB', 1, 'US_DB'],
    ['TENANT_A', 1, 'TENANT_A'],
    ['TENANT_B', 1, 'TENANT_B'],
  ]);
  expect(m.ok && m.members[0].spec).toMatchObject({ name: 'orders-usd', limits: { chunkSize: 500, concurrency: 4 } });
  expect(m.ok && 'databases' in m.members[0].spec).toBe(false);
});

test('waves reach a count or a share in all, named members first; the members no wave reached go last; a wave that reaches no new member is no wave (numbers close up)', () => {
  const names = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J'];
  const waves = (w: Parameters<typeof assignWaves>[1]) => Object.fromEntries(assignWaves(names, w));
  expect(Object.values(waves([1, '10%', '50%', '100%']))).toEqual([1, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
  expect(waves([['J'], 2])).toMatchObject({ J: 1, A: 2, B: 3, C: 3 });
  expect(Object.values(waves([]))).toEqual(Array(10).fill(1));
});

test('a per-member limit replaces the spec’s for that member alone, and is validated as limits are', () => {
  const m = fleetMembers(fleet({ fleet: { members: { TENANT_B: { limits: { rowsPerSecond: 2000, concurrency: 1 } } } } }), env);
  expect(m.ok && m.members.map((x) => x.spec.limits)).toEqual([
    { chunkSize: 500, concurrency: 4 },
    { chunkSize: 500, concurrency: 4 },
    { chunkSize: 500, concurrency: 1, rowsPerSecond: 2000 },
  ]);
  const bad = fleetMembers(fleet({ fleet: { members: { TENANT_B: { limits: { concurrency: 0 } } } } }), env);
  expect(bad).toMatchObject({ ok: false, problems: [{ path: 'fleet.members.TENANT_B.limits.concurrency' }] });
});

test('what cannot be a member is said at its field: an unset name, an empty family, a name twice, an override of no member', () => {
  const m = fleetMembers(fleet({ databases: ['US_DB', 'EU_DB', 'SHARD_*', 'US_DB'], fleet: { members: { ASIA_DB: { limits: {} } }, waves: [['NOPE']] } }), env);
  expect(m.ok).toBe(false);
  expect(!m.ok && m.problems.map((p) => [p.path, p.message])).toEqual([
    ['databases.1', "names EU_DB, which is not set in this environment; set it to the member's URL"],
    ['databases.2', 'is the family SHARD_*, but no environment variable starting with SHARD_ is set here; set them, or name the members'],
    ['databases.3', 'names US_DB again (each member once)'],
    ['fleet.waves.0', 'names NOPE, which is not a member'],
    ['fleet.members.ASIA_DB', 'names ASIA_DB, which is not a member (databases: US_DB)'],
  ]);
});

test('a family that takes in a variable that is no database URL (TENANT_COUNT) is refused, naming it, rather than planned as a member', () => {
  const m = fleetMembers(fleet(), { ...env, TENANT_COUNT: '3' });
  expect(!m.ok && m.problems.map((p) => [p.path, p.message])).toEqual([
    [
      'databases.1',
      'is the family TENANT_*, which takes in TENANT_COUNT, whose value is not a PostgreSQL URL (postgres://…); name the members, or a narrower family',
    ],
  ]);
});

test('a fleet spec refuses a URL where a name belongs, and a wave that is no wave', () => {
  expect(fleetSpecSchema.safeParse({ ...fleet(), databases: ['postgres://x'] }).error?.issues[0].message).toMatch(/NAME of an environment variable/);
  expect(fleetSpecSchema.safeParse({ ...fleet(), fleet: { waves: ['150%'] } }).error?.issues[0].message).toMatch(/a share of the members from 1% to 100%/);
});
