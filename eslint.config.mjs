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
        '**/checks/*',
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
const LEDGER_MESSAGE = 'SQL on the ledger (backfill.*) belongs in src/ledger: add or reuse a named function there';

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
      ],
    },
  },
  {
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts', 'src/compiler/**/*.ts', 'src/governor/**/*.ts'],
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
