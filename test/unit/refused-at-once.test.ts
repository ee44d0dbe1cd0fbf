/**
 * Every activity's error classification (activities/refused-at-once.ts): which SQLSTATE
 * classes end an activity at once and which are left to Temporal's retries, one row per
 * class, with what the message may and may not carry.
 */
import { ApplicationFailure } from '@temporalio/common';
import { refusedAtOnce } from '../../src/activities/refused-at-once';
import { FailureType } from '../../src/domain/failures';

function pgError(code: string, message: string, extra: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { code, ...extra });
}

const NOT_RETRIED: [string, string, string][] = [
  ['22 data exception', '22012', 'division by zero'],
  ['22 with a value in the message', '22P02', 'invalid input syntax for type integer: "4111-1111"'],
  ['23 integrity constraint', '23514', 'new row for relation "runs" violates check constraint "c"'],
  ['42 undefined column', '42703', 'column "finished_at" does not exist'],
  ['42 undefined table', '42P01', 'relation "backfill.runs" does not exist'],
  ['42 indeterminate collation', '42P22', 'could not determine which collation to use for string hashing'],
  ['0A feature not supported', '0A000', 'FOR UPDATE is not allowed with aggregate functions'],
  ['21 cardinality', '21000', 'more than one row returned by a subquery used as an expression'],
  ['2B dependent objects', '2BP01', 'cannot drop table because other objects depend on it'],
  ['44 with check option', '44000', 'new row violates check option for view "v"'],
  ['P0 raised by code in the database', 'P0001', 'customer 4111 is blocked'],
];

const RETRIED: [string, string, string][] = [
  ['42501 a missing privilege (an operator may GRANT)', '42501', 'permission denied for table runs'],
  ['40001 serialization failure', '40001', 'could not serialize access due to concurrent update'],
  ['40P01 deadlock', '40P01', 'deadlock detected'],
  ['55P03 lock not available', '55P03', 'canceling statement due to lock timeout'],
  ['57014 statement timeout', '57014', 'canceling statement due to statement timeout'],
  ['57P01 admin shutdown', '57P01', 'terminating connection due to administrator command'],
  ['08006 connection failure', '08006', 'connection failure'],
  ['53100 disk full', '53100', 'could not extend file'],
  ['53300 too many connections', '53300', 'sorry, too many clients already'],
  ['XX000 internal error', 'XX000', 'unexpected'],
];

async function outcome(err: unknown): Promise<unknown> {
  const { nextPartitions } = refusedAtOnce({
    nextPartitions: async () => {
      throw err;
    },
  });
  return nextPartitions().then(
    () => undefined,
    (e: unknown) => e,
  );
}

test.each(NOT_RETRIED)('%s (%s) ends the activity at once, naming it and the error', async (_, code, message) => {
  const failure = await outcome(pgError(code, message, { table: 'runs', schema: 'backfill' }));
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const f = failure as ApplicationFailure;
  expect(f.nonRetryable).toBe(true);
  expect(f.type).toBe(FailureType.DatabaseRefused);
  expect(f.message).toMatch(/^nextPartitions was refused by the database: /);
  expect(f.message).toContain(`SQLSTATE ${code}`);
  expect(f.message).toContain('table backfill.runs');
});

test.each(RETRIED)('%s (%s) is left to the retries, unchanged', async (_, code, message) => {
  const err = pgError(code, message);
  expect(await outcome(err)).toBe(err);
});

test('errors that are not PostgreSQL’s, and failures already classified, pass through unchanged', async () => {
  const plain = new Error('socket hang up');
  expect(await outcome(plain)).toBe(plain);
  const misrouted = ApplicationFailure.retryable('this worker is connected to another database', FailureType.WrongDatabase);
  expect(await outcome(misrouted)).toBe(misrouted);
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  expect(await outcome(reset)).toBe(reset);
});

test('the message never carries a row value: quoted values of class 22 and the text of a RAISE are left out', async () => {
  const cast = (await outcome(pgError('22P02', 'invalid input syntax for type integer: "4111-1111"'))) as ApplicationFailure;
  expect(cast.message).not.toContain('4111');
  const raised = (await outcome(pgError('P0001', 'customer 4111 is blocked'))) as ApplicationFailure;
  expect(raised.message).not.toContain('4111');
});

test('activities keep their names and results', async () => {
  const wrapped = refusedAtOnce({ registerRun: async (n: number) => n + 1 });
  expect(wrapped.registerRun.name).toBe('registerRun');
  expect(await wrapped.registerRun(1)).toBe(2);
});
