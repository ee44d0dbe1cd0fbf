/**
 * Every integration file takes the turn lock before its first test: shared by default, so two
 * files run side by side; exclusive for a file that calls runsAlone (test/helpers/turns.ts).
 * The lock is a PostgreSQL advisory lock on the test server, held by a session of its own, so it
 * spans jest's worker processes and ends with the file (or its process). PostgreSQL grants lock
 * requests in the order they queue: a file waiting to run alone is not overtaken by files
 * asking for a shared turn after it.
 */
import pg from 'pg';
import { runsAloneBecause } from '../helpers/turns';

const TURN_LOCK = 0x62660001;
/** A file waiting to run alone waits for the longest file beside it: far longer than any test's timeout. */
const WAIT_FOR_TURN_MS = 2 * 60 * 60 * 1000;

let session: pg.Client | undefined;

beforeAll(async () => {
  const url = process.env.BACKFILL_TEST_PG_URL;
  if (!url) return;
  session = new pg.Client({ connectionString: url, application_name: 'backfill-test-turn' });
  await session.connect();
  await session.query(runsAloneBecause() ? 'SELECT pg_advisory_lock($1)' : 'SELECT pg_advisory_lock_shared($1)', [TURN_LOCK]);
}, WAIT_FOR_TURN_MS);

afterAll(async () => {
  await session?.end();
  session = undefined;
});
