/** Who is acting, for the audit record: BACKFILL_ACTOR, else the OS user. */
import os from 'node:os';

export function defaultActor(env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKFILL_ACTOR || os.userInfo().username;
}
