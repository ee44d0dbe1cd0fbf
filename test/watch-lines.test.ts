/**
 * Following a run from the CLI. `watch -o jsonl` as a script reads it: one JSON object per line
 * on stdout while the run goes on, each a progress update (counts only, never a cursor or a row
 * value), rows read never going back, and the run's status report as the last line. And the
 * links into the Web UI that `watch`, `status` and `list` print, whose list filter Temporal runs.
 */
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('watchlines', { rows: 6000 });

test('watch -o jsonl streams one update per change while the run goes on, then the status report; nothing else on stdout', async () => {
  // throttled to last a few seconds: the updates have something to say
  const started = await env.start(
    ordersSpec(env.db.envVar, {
      name: 'watch-lines',
      partition: { by: 'range', column: 'id', size: 2000 },
      limits: { chunkSize: 500, concurrency: 1, rowsPerSecond: 1500 },
    }),
  );
  const watched = await runCli(['watch', started.runId, '--database', env.db.envVar, '-o', 'jsonl']);
  expect(watched.code).toBe(0);
  const lines = watched.stdout.trimEnd().split('\n');
  const parsed = lines.map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  const updates = parsed.slice(0, -1) as {
    type: string;
    runId: string;
    rows: { read: number };
    partitions: { total: number; done: number };
    running: object[];
  }[];
  const last = parsed.at(-1) as { type: string; status: string; rowsWritten?: number };

  expect(updates.length).toBeGreaterThanOrEqual(3);
  expect(updates.every((u) => u.type === 'progress' && u.runId === started.runId)).toBe(true);
  const read = updates.map((u) => u.rows.read);
  expect(read).toEqual([...read].sort((a, b) => a - b));
  expect(new Set(read).size).toBeGreaterThanOrEqual(3); // it moved, and each move was a line
  const end = updates.at(-1)!.partitions;
  expect(end.done).toBe(end.total);
  expect(watched.stdout).not.toMatch(/cursor/);
  expect(last).toMatchObject({ type: 'status', status: 'succeeded' });
  // every line stands alone: no pretty-printed document spread over lines
  expect(lines.every((l) => l.startsWith('{') && l.endsWith('}'))).toBe(true);
});

test('watch, status and list link to the Web UI: the run, and a list filtered by spec name that Temporal finds it with', async () => {
  const started = await env.start(ordersSpec(env.db.envVar, { name: 'watch-links', partition: { by: 'range', column: 'id', size: 3000 } }));
  const db = ['--database', env.db.envVar];
  const ui = { TEMPORAL_UI_URL: 'http://ui.example:8080' };
  const runUrl = `http://ui.example:8080/namespaces/default/workflows/${encodeURIComponent(started.workflowId)}`;

  const watched = await runCli(['watch', started.runId, ...db], ui);
  expect(watched.code).toBe(0);
  expect(watched.stderr).toContain(`Web UI: ${runUrl}`);
  expect(watched.stdout).toContain(`web ui:    ${runUrl}`);

  const status = JSON.parse((await runCli(['status', started.runId, ...db, '-o', 'json'], ui)).stdout) as { webUi: string };
  expect(status.webUi).toBe(runUrl);

  const listed = await runCli(['list', '--name', 'watch-links', ...db], ui);
  const link = /Web UI: (\S+)/.exec(listed.stdout)![1];
  expect(link.startsWith('http://ui.example:8080/namespaces/default/workflows?query=')).toBe(true);
  // the filter is a query Temporal runs, and it finds this run's workflow and no other spec's
  const query = new URL(link).searchParams.get('query')!;
  expect(query).toBe('WorkflowType="backfillRunWorkflow" AND BackfillName="watch-links"');
  const found = async () => {
    const ids: string[] = [];
    for await (const w of env.client.workflow.list({ query })) ids.push(w.workflowId);
    return ids;
  };
  // visibility follows the history by a moment
  for (let i = 0; i < 50 && (await found()).length === 0; i++) await new Promise((r) => setTimeout(r, 200));
  expect(await found()).toEqual([started.workflowId]);
  const runs = JSON.parse((await runCli(['list', '--name', 'watch-links', ...db, '-o', 'json'], ui)).stdout) as { runId: string; webUi: string }[];
  expect(runs).toEqual([expect.objectContaining({ runId: started.runId, webUi: runUrl })]);
});
