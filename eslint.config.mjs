// Workflow code is bundled into Temporal's deterministic sandbox: it may import only
// workflow-safe modules. This rule keeps Node-only code (pg, fs, activities' values) out.
import tseslint from 'typescript-eslint';

const nodeOnly = {
  paths: ['pg', 'fs', 'path', 'os', 'crypto', 'child_process', 'yaml', 'pino', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
  patterns: [
    { group: ['node:*'], message: 'workflow code runs in a deterministic sandbox: no Node built-ins' },
    { group: ['**/activities/*', '**/activities', '**/db/*', '**/ledger/*', '**/cli/*', '**/dev/*', '**/specs/load*', '**/sql/*', '**/operations/*', '**/operations', '**/temporal/*', '**/util/*', '**/worker'], message: 'import activity types with `import type` only; no Node-only modules in workflows', allowTypeImports: true },
  ],
};

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
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts', 'src/planner/**/*.ts', 'src/governor/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', nodeOnly] },
  },
  {
    // a workflow evaluates its imports anew for every execution (once per partition): no zod there
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { ...nodeOnly, paths: [...nodeOnly.paths, { name: 'zod', message: 'zod costs every workflow execution its construction: validate in activities or the client' }] },
      ],
    },
  },
);
