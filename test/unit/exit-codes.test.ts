/** Exit codes (docs/operating.md "Exit codes"): a script tells "no" (1) from "bad input" (2) from "could not answer" (3). */
import { status } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client/lib/errors';
import { Declined } from '../../src/cli/confirm';
import { exitCodeFor, ExitCode } from '../../src/cli/output';
import { UnreachableError } from '../../src/domain/unreachable-error';
import { UsageError } from '../../src/domain/usage-error';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });
const grpc = (code: number) => new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error('grpc'), { code, details: 'x', metadata: {} }) });

test.each([
  ['bad input', new UsageError('unknown run x'), ExitCode.Usage],
  ['a failure', new Error('the run failed'), ExitCode.Failed],
  ['Temporal not reached', new UnreachableError('cannot reach Temporal at 127.0.0.1:1'), ExitCode.Unreachable],
  ['a refused database connection', refused, ExitCode.Unreachable],
  [
    'a lost database connection deep in the cause',
    new Error('reading the ledger', { cause: new Error('query', { cause: new Error('Connection terminated unexpectedly') }) }),
    ExitCode.Unreachable,
  ],
  [
    'a PostgreSQL shutting down',
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' }),
    ExitCode.Unreachable,
  ],
  ['Temporal unavailable mid-call', grpc(status.UNAVAILABLE), ExitCode.Unreachable],
  ['Temporal refusing a call', grpc(status.INVALID_ARGUMENT), ExitCode.Failed],
  ['a PostgreSQL refusing a statement', Object.assign(new Error('permission denied for table orders'), { code: '42501', severity: 'ERROR' }), ExitCode.Failed],
  ['declined at a prompt', new Declined('cancel'), ExitCode.Interrupted],
])('%s', (_what, err, code) => {
  expect(exitCodeFor(err)).toBe(code);
});

test('the codes are distinct', () => {
  expect(new Set(Object.values(ExitCode)).size).toBe(Object.values(ExitCode).length);
});
