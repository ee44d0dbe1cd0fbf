/**
 * A namespace made by an admin step, as on a cluster, holds none of the run workflow's search
 * attributes. The first `backfill start` there registers them and must succeed at once: the
 * server stores them before its frontend accepts them, and a start in between was refused
 * with only "Failed to start Workflow". A namespace with no free slot of a type (SQL
 * visibility has a fixed number) is refused with the reason and the command that fixes it,
 * before anything starts.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { useTestEnvironment } from './helpers/environment';
import { runCli } from './helpers/cli';
import { diffAgainstExpected, ordersSpec, writeSpec } from './helpers/orders';
import { startTestWorker, temporalAddress, uniqueQueue, type TestWorker } from './helpers/temporal';
import { findTemporalCli } from '../src/dev/temporal-cli';
import { createNamespace } from '../src/dev/temporal-production';
import { uniqueName } from './helpers/unique';
import { pollUntil } from '../src/util/poll-until';

const env = useTestEnvironment('freshns', { rows: 5_000, worker: false });
const workers: TestWorker[] = [];

afterAll(async () => {
  for (const w of workers) await w.stop();
});

/** A namespace made as an admin makes one (`temporal operator namespace create`), once the frontend serves it. */
async function freshNamespace(): Promise<string> {
  const namespace = uniqueName('bf-ns', '-');
  await createNamespace(findTemporalCli()!, temporalAddress(), namespace, '24h');
  return namespace;
}

async function customAttributes(client: Client, namespace: string): Promise<string[]> {
  const listed = await client.connection.operatorService.listSearchAttributes({ namespace });
  return Object.keys(listed.customAttributes ?? {}).sort();
}

test('the first start on a fresh namespace registers the search attributes and runs, exact', async () => {
  const namespace = await freshNamespace();
  expect(await customAttributes(env.client, namespace)).toEqual([]);
  const taskQueue = uniqueQueue('freshns');
  workers.push(await startTestWorker(taskQueue, { temporal: { namespace } }));

  const started = await runCli(['start', writeSpec(ordersSpec(env.db.envVar, { name: 'fresh-namespace' })), '--wait'], {
    TEMPORAL_NAMESPACE: namespace,
    BACKFILL_TASK_QUEUE: taskQueue,
  });
  expect(started.stderr).not.toMatch(/Failed to start Workflow/);
  expect(started.code).toBe(0);
  expect(await customAttributes(env.client, namespace)).toEqual(['BackfillName', 'BackfillPercent', 'BackfillRowsWritten', 'BackfillRunId', 'BackfillStatus']);
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0 });
  // the run is findable by its attributes in that namespace
  const { rows } = await env.db.pool.query("SELECT run_id FROM backfill.runs WHERE name = 'fresh-namespace'");
  const found = await pollUntil(
    async () => {
      const { executions } = await env.client.workflowService.listWorkflowExecutions({ namespace, query: `BackfillRunId = '${rows[0].run_id}'` });
      return executions.length === 1 ? executions : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 250 },
  );
  expect(found).toHaveLength(1);
});

test('a namespace with no free Int slot is refused with the reason and the command, and nothing starts', async () => {
  const namespace = await freshNamespace();
  // the dev server's SQLite visibility has three Int slots: take two, leaving one for backfill's two
  const { INDEXED_VALUE_TYPE_INT } = temporal.api.enums.v1.IndexedValueType;
  await env.client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: { OtherIntA: INDEXED_VALUE_TYPE_INT, OtherIntB: INDEXED_VALUE_TYPE_INT },
  });
  const started = await runCli(['start', writeSpec(ordersSpec(env.db.envVar, { name: 'no-free-slot' }))], {
    TEMPORAL_NAMESPACE: namespace,
    BACKFILL_TASK_QUEUE: uniqueQueue('noslot'),
  });
  expect(started.code).toBe(2);
  expect(started.stderr).toMatch(
    new RegExp(
      `^backfill: namespace ${namespace} has no free search attribute slot for BackfillName \\(Keyword\\), BackfillRunId \\(Keyword\\), BackfillStatus \\(Keyword\\), BackfillPercent \\(Int\\), BackfillRowsWritten \\(Int\\) \\(INVALID_ARGUMENT: .*cannot have more than 3 search attribute`,
    ),
  );
  expect(started.stderr).toContain(
    `then run: temporal operator search-attribute create --namespace ${namespace} --name BackfillName --type Keyword --name BackfillRunId --type Keyword --name BackfillStatus --type Keyword --name BackfillPercent --type Int --name BackfillRowsWritten --type Int`,
  );
  expect(await customAttributes(env.client, namespace)).toEqual(['OtherIntA', 'OtherIntB']);
  const { rows } = await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.runs WHERE name = 'no-free-slot'").catch(() => ({ rows: [{ n: 0 }] }));
  expect(rows[0].n).toBe(0);
  const { executions } = await env.client.workflowService.listWorkflowExecutions({ namespace });
  expect(executions).toHaveLength(0);
});
