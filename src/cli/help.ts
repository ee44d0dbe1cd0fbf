/**
 * How `backfill --help` reads: commands in four groups, in the order an operator meets them, and
 * examples for every command that does not spell its own (start, set-limits, partitions and
 * report keep theirs next to their options).
 */
import type { Command } from 'commander';

const RUN = '20261202-1431-efb821bb3c83d78a';

export const HELP_GROUPS: { heading: string; commands: string[] }[] = [
  { heading: 'Specs:', commands: ['validate', 'plan', 'stale', 'schema'] },
  {
    heading: 'Runs:',
    commands: ['start', 'watch', 'status', 'partitions', 'list', 'pause', 'resume', 'cancel', 'set-limits', 'retry-failed', 'revert', 'approve'],
  },
  { heading: 'Proof:', commands: ['verify', 'after', 'cleanup', 'report'] },
  { heading: 'Infrastructure:', commands: ['worker', 'codec-server', 'migrate', 'dev', 'demo', 'setup', 'completion'] },
];

const EXAMPLES: Record<string, string[]> = {
  validate: ['backfill validate spec.yaml', 'backfill validate examples/*.yaml -o jsonl'],
  plan: ['backfill plan spec.yaml', 'backfill plan spec.yaml --save plan.json', 'backfill plan spec.yaml --measure-writes -o json'],
  stale: ['backfill stale spec.yaml', 'backfill start spec.yaml --only-stale'],
  schema: ['backfill schema > spec.schema.json'],
  watch: [`backfill watch ${RUN}`, `backfill watch ${RUN} -o jsonl | tee progress.jsonl`],
  status: [`backfill status ${RUN}`, `backfill status backfill/orders-usd/${RUN} -o json`],
  list: ['backfill list', 'backfill list --status failed', 'backfill list --name orders-usd -o json'],
  pause: [`backfill pause ${RUN} --reason "replica lag during the sale"`],
  resume: [`backfill resume ${RUN} --reason "lag back under 1 s"`, `backfill resume ${RUN} --accept-input-change --reason "fx rates reloaded on purpose"`],
  cancel: [`backfill cancel ${RUN} --reason "wrong rounding, fixing the transform"`, `backfill cancel ${RUN} --reason "superseded" --yes   # in a script`],
  revert: [
    `backfill revert ${RUN} --dry-run`,
    `backfill revert ${RUN} --reason "rates table was a day off" --wait`,
    `backfill revert ${RUN} --partition p0003 p0004 --reason "only March was wrong"`,
  ],
  'retry-failed': [`backfill retry-failed ${RUN} --reason "bad row fixed" --wait`],
  approve: [`backfill approve ${RUN} --reason "canary diff reviewed: 0 mismatches"`],
  verify: [`backfill verify ${RUN}`, `backfill verify ${RUN} --partition id:000200000-000300000 -o json`],
  after: [`backfill after ${RUN}`],
  cleanup: [`backfill cleanup ${RUN}`],
  worker: ['BACKFILL_DATABASES=DATABASE_URL,REPORTING_URL backfill worker', 'BACKFILL_MAX_ACTIVITIES=8 LOG_LEVEL=warn backfill worker'],
  migrate: ['backfill migrate', 'backfill migrate --database REPORTING_URL -o json'],
  dev: ['backfill dev', 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres backfill dev'],
  demo: ['backfill demo', 'backfill demo --exit'],
  setup: ['backfill setup'],
  'codec-server': ['BACKFILL_PAYLOAD_KEY=… backfill codec-server', 'backfill codec-server --port 8888 --ui-origin https://temporal-ui.example.com'],
};

/** Puts each command in its group, and adds the examples it lacks. */
export function arrangeHelp(program: Command): void {
  for (const c of program.commands) {
    const group = HELP_GROUPS.find((g) => g.commands.includes(c.name()));
    if (group) c.helpGroup(group.heading);
    const examples = EXAMPLES[c.name()];
    if (examples) c.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
  }
}
