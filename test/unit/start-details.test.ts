import { startDetails } from '../../src/activities/start-partition';

const member = (partitionId: string) => ({ database: 'ORDERS_DB', runId: 'r1', partitionId, runWorkflowId: 'backfill/orders/r1' });

test("a partition's page names the run that started it", () => {
  expect(startDetails({ input: member('day:2024-03-01') })).toBe(
    'Started by the run workflow `backfill/orders/r1` (it is not a child: the run learns of the partition by its report).',
  );
});

test("a group's page names the run and every member, so an operator finds a partition's workflow from the Web UI", () => {
  const members = ['day:2024-03-01', 'day:2024-03-02', 'day:2024-03-03'].map(member);
  const details = startDetails({ input: members[0], group: { members } });
  expect(details).toMatch(/^Started by the run workflow `backfill\/orders\/r1` \(it is not a child: the run learns of its partitions by their reports\)\./);
  expect(details).toContain('Its partitions: `day:2024-03-01`, `day:2024-03-02`, `day:2024-03-03`.');
});
