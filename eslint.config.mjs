// Workflow code is bundled into Temporal's deterministic sandbox: it may import only
// workflow-safe modules. This rule keeps Node-only code (pg, fs, activities' values) out.
import tseslint from 'typescript-eslint';

const nodeOnly = {
  paths: ['pg', 'fs', 'path', 'os', 'crypto', 'child_process', 'yaml', 'pino', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
  patterns: [
    { group: ['node:*'], message: 'workflow code runs in a deterministic sandbox: no Node built-ins' },
    {
      group: [
        '**/activities/*',
        '**/activities',
        '**/db/*',
        '!**/db/sql',
        '**/ledger/*',
        '**/cli/*',
        '**/dev/*',
        '**/specs/load*',
        '**/preflight/*',
        '**/gates/*',
        '**/undo/*',
        '!**/undo/*-statements',
        '**/split-tail/*',
        '**/after-actions/*',
        '**/api/*',
        '**/operations/*',
        '**/operations',
        '**/temporal/*',
        '**/util/*',
        '**/worker',
      ],
      message: 'import activity types with `import type` only; no Node-only modules in workflows',
      allowTypeImports: true,
    },
  ],
};

/** SQL naming a ledger table: FROM / JOIN / INTO / UPDATE / TABLE / EXISTS backfill.<table>. */
const LEDGER_SQL = '/(FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\\s+backfill\\.[a-z_]+/i';
const UPDATE_MESSAGE =
  'send updates with executeUpdate/startUpdate from src/temporal/update-across-continue-as-new.ts: a continue-as-new aborts them, and only that helper sends them again';
const LEDGER_MESSAGE = 'SQL on the ledger (backfill.*) belongs in src/ledger: add or reuse a named function there';

/**
 * The layers, low to high (README "Layout"): a module imports values only from its own layer
 * and those below it. `import type` may cross upward (the type-only exceptions the README
 * names). Capability folders (undo/, split-tail/, after-actions/, gates/) span layers by file:
 * their *-statements.ts are pure like compiler/, the rest sit with the activities.
 */
const ABOVE_ACTIVITIES = ['**/operations/*', '**/operations', '**/api/*', '**/cli/*', '**/dev/*', '**/report/*', '../worker', '../../worker', '../index'];
const CAPABILITIES = ['**/undo/*', '!**/undo/*-statements', '**/split-tail/*', '**/after-actions/*', '**/gates/*'];
const ACTIVITY_LAYER = [...CAPABILITIES, '**/activities/*', '**/activities', '**/workflows/*', '!**/workflows/messages', '**/temporal/*'];
const ABOVE_LEDGER = ['**/preflight/*', ...ACTIVITY_LAYER, ...ABOVE_ACTIVITIES];
const ABOVE_FOUNDATION = ['**/ledger/*', '**/ledger', ...ABOVE_LEDGER];
/** Capability files at the operations level: `revert`, `verify` of a revert and `plan`'s image sample (undo/), a fleet's plan (fleet/). */
const CAPABILITY_OPERATIONS = [
  'src/undo/revert-run.ts',
  'src/undo/verify-revert.ts',
  'src/undo/sample-images.ts',
  'src/fleet/plan-fleet.ts',
  'src/fleet/start-fleet.ts',
  'src/fleet/fleet-status.ts',
  'src/fleet/fleet-control.ts',
  'src/fleet/fleet-result.ts',
  'src/fleet/retry-fleet.ts',
  'src/fleet/revert-fleet.ts',
  'src/fleet/fleet-report.ts',
  'src/fleet/fleet-saved-plan.ts',
  'src/fleet/fleet-status-report.ts',
  'src/fleet/fleet-from-ledgers.ts',
  'src/fleet/verify-fleet.ts',
];
const upward = (group) => ({
  group,
  message: 'a value import from a higher layer (README "Layout"); import types with `import type`, or move the code down',
  allowTypeImports: true,
});
const layerRule = (groups, extra = {}) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { paths: extra.paths ?? [], patterns: [...(extra.patterns ?? []), upward(groups)] }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // the ledger owns its tables: every statement on backfill.* is a named function in src/ledger
    files: ['src/**/*.ts'],
    ignores: ['src/ledger/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: `Literal[value=${LEDGER_SQL}]`, message: LEDGER_MESSAGE },
        { selector: `TemplateElement[value.raw=${LEDGER_SQL}]`, message: LEDGER_MESSAGE },
        {
          selector: 'CallExpression[callee.property.name=/^(executeUpdate|startUpdate|executeUpdateWithStart|startUpdateWithStart)$/]',
          message: UPDATE_MESSAGE,
        },
      ],
    },
  },
  {
    // foundations: plain data, helpers, specs, the database driver, the governor, transforms, pure statements
    files: ['src/util/**/*.ts', 'src/security/**/*.ts', 'src/specs/**/*.ts', 'src/db/**/*.ts', 'src/transforms/**/*.ts', 'src/*logger.ts', 'src/fleet/**/*.ts'],
    ignores: CAPABILITY_OPERATIONS,
    rules: layerRule(ABOVE_FOUNDATION),
  },
  {
    // workflow-safe and at the foundation: the domain's plain data and every pure statement builder
    files: ['src/domain/**/*.ts', 'src/compiler/**/*.ts', 'src/governor/**/*.ts', 'src/undo/*-statements.ts'],
    rules: layerRule(ABOVE_FOUNDATION, nodeOnly),
  },
  {
    files: ['src/ledger/**/*.ts'],
    rules: layerRule(ABOVE_LEDGER),
  },
  {
    // checks before a run (preflight) and its gates' logic: the ledger and below
    files: ['src/preflight/**/*.ts', 'src/gates/compare.ts', 'src/gates/gate-checks.ts', 'src/gates/distributions.ts', 'src/gates/invariants.ts'],
    rules: layerRule([...ACTIVITY_LAYER, ...ABOVE_ACTIVITIES]),
  },
  {
    // the activities and the capability folders' worker-side code
    files: [
      'src/activities/**/*.ts',
      'src/undo/**/*.ts',
      'src/split-tail/**/*.ts',
      'src/after-actions/**/*.ts',
      'src/gates/gate-activities.ts',
      'src/temporal/**/*.ts',
    ],
    ignores: ['src/undo/*-statements.ts', ...CAPABILITY_OPERATIONS],
    rules: layerRule(ABOVE_ACTIVITIES),
  },
  {
    // the operations, and undo's: starting a revert, verifying one, sampling images for a plan
    files: ['src/operations/**/*.ts', ...CAPABILITY_OPERATIONS],
    rules: layerRule(['**/api/*', '**/cli/*', '**/dev/*']),
  },
  {
    // workflow-safe: the workflows import activity types only
    files: ['src/workflows/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', nodeOnly] },
  },
  {
    // a workflow evaluates its imports anew for every execution (once per partition): no zod there
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          ...nodeOnly,
          paths: [...nodeOnly.paths, { name: 'zod', message: 'zod costs every workflow execution its construction: validate in activities or the client' }],
        },
      ],
    },
  },
);
