/**
 * The environment variables that are numbers, levels or addresses, checked with zod before use.
 * `BACKFILL_MAX_ACTIVITIES=2O` once gave a worker NaN activity slots and a pool of NaN
 * connections; now the process stops at startup, naming the variable, what it holds and what it
 * takes. An empty variable counts as unset.
 */
import { z } from 'zod';
import { UsageError } from '../domain/usage-error';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'must be a whole number' })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { message: `must be between ${min} and ${max}` });

const settingsSchema = z.object({
  BACKFILL_MAX_ACTIVITIES: wholeNumber(1, 1000).default(20),
  TEMPORAL_UI_PORT: wholeNumber(1, 65535).default(8233),
  // the embedded PostgreSQL of `dev` and `demo` (not used when DATABASE_URL is set)
  BACKFILL_PG_PORT: wholeNumber(1, 65535).default(54329),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  BACKFILL_METRICS_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, { message: 'must be host:port, such as 0.0.0.0:9464' })
    .optional(),
  // plan, start and the worker's registration refuse a superuser or BYPASSRLS connection (compose sets it on the worker)
  BACKFILL_REQUIRE_LEAST_PRIVILEGE: z
    .enum(['0', '1'], { message: 'must be 1 (refuse a superuser or BYPASSRLS connection) or 0' })
    .default('0')
    .transform((v) => v === '1'),
  // worker deployments (src/temporal/worker-versioning.ts): a build id turns Worker Versioning on
  BACKFILL_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, { message: 'must be letters, digits, dots, dashes or underscores (a git sha, a release tag)' })
    .optional(),
  BACKFILL_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, { message: 'must be letters, digits, dots, dashes or underscores' })
    .default('backfill'),
  BACKFILL_VERSIONING_BEHAVIOR: z.enum(['pinned', 'auto-upgrade'], { message: 'must be pinned or auto-upgrade' }).default('pinned'),
  // a bearer token guessable by trying is no guard for the payload keys behind it
  BACKFILL_CODEC_TOKEN: z.string().min(16, { message: 'must be at least 16 characters (e.g. openssl rand -hex 16)' }).optional(),
});

export type EnvSettings = z.infer<typeof settingsSchema>;

export function envSettings(env: NodeJS.ProcessEnv = process.env): EnvSettings {
  const given: Record<string, string> = {};
  for (const key of Object.keys(settingsSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') given[key] = value.trim();
  }
  const parsed = settingsSchema.safeParse(given);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${String(i.path[0])}=${JSON.stringify(given[String(i.path[0])])} ${i.message}`);
  throw new UsageError(`${problems.join('; ')} (docs/configuration.md)`);
}
