/**
 * The search attributes `start` registers on a namespace that lacks them. On a Temporal server
 * on PostgreSQL the operator API stored them seconds before the frontend accepted them, and the
 * first start failed with only "Failed to start Workflow"; the dev server (test/fresh-namespace)
 * accepts them at once, so the wait is shown here against a namespace that says "unknown" a few
 * times first. Refusals carry the server's status and the command that fixes them.
 */
import { ServiceError, type Client } from '@temporalio/client';
import { ensureSearchAttributes, registrationRefused } from '../../src/temporal/search-attributes';
import { temporalErrorMessage } from '../../src/temporal/errors';
import { SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });

/** A namespace whose frontend rejects queries on the attributes `unknownFor` times after they were added. */
function namespace(unknownFor: number) {
  const calls = { add: 0, count: 0 };
  const client = {
    options: { namespace: 'prod' },
    connection: {
      operatorService: {
        listSearchAttributes: async () => ({ customAttributes: {} }),
        addSearchAttributes: async () => {
          calls.add += 1;
          return {};
        },
      },
    },
    workflow: {
      count: async () => {
        calls.count += 1;
        if (calls.count <= unknownFor)
          throw new ServiceError('Failed to count workflows', { cause: grpcError(3, 'invalid query: BackfillName is not defined') });
        return { count: 0 };
      },
    },
  } as unknown as Client;
  return { client, calls };
}

test('registered attributes are waited for until the namespace accepts them', async () => {
  const { client, calls } = namespace(3);
  await ensureSearchAttributes(client, { timeoutMs: 10_000 });
  expect(calls).toEqual({ add: 1, count: 4 });
});

test('a namespace that never accepts them: an error that says nothing started and what to do', async () => {
  const { client } = namespace(Infinity);
  await expect(ensureSearchAttributes(client, { timeoutMs: 600 })).rejects.toThrow(
    'registered the search attributes BackfillName, BackfillRunId, BackfillStatus, BackfillPercent, BackfillRowsWritten in namespace prod, but its frontend did not accept them within 0.6 s; start again in a minute (nothing was started)',
  );
});

test('a caller who may not register them is given the exact command', () => {
  const refused = new ServiceError('Failed to add search attributes', { cause: grpcError(7, 'Request unauthorized.') });
  expect(registrationRefused(refused, 'prod', SEARCH_ATTRIBUTES)).toBe(
    'could not register the search attributes backfill runs use in namespace prod (PERMISSION_DENIED: Request unauthorized.); have a namespace admin run once: ' +
      'temporal operator search-attribute create --namespace prod --name BackfillName --type Keyword --name BackfillRunId --type Keyword --name BackfillStatus --type Keyword ' +
      '--name BackfillPercent --type Int --name BackfillRowsWritten --type Int (on Temporal Cloud: tcld namespace search-attributes add), then start again',
  );
});

test('every wrapped Temporal error the CLI reports carries its gRPC status and the server’s words', () => {
  const wrapped = new ServiceError('Failed to start Workflow', { cause: grpcError(3, 'Namespace prod has no search attribute BackfillName') });
  expect(temporalErrorMessage(wrapped)).toBe('Failed to start Workflow: INVALID_ARGUMENT: Namespace prod has no search attribute BackfillName');
  expect(temporalErrorMessage(new Error('plain'))).toBeUndefined();
});
