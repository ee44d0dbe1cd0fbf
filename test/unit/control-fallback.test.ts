/**
 * When an operator's pause, resume or cancel falls back from the update to the signal. CI once
 * saw the no-worker deadline come back as gRPC CANCELLED rather than DEADLINE_EXCEEDED (the
 * server gave up first), and the CLI threw it instead of sending the signal.
 */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { fallsBackToSignal } from '../../src/operations/control';

const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });

describe('fallsBackToSignal', () => {
  it('no worker before the deadline, as the client saw it (DEADLINE_EXCEEDED): the signal', () => {
    expect(fallsBackToSignal(new WorkflowUpdateRPCTimeoutOrCancelledError('Deadline exceeded', { cause: grpcError(4, 'Deadline exceeded') }))).toBe(true);
  });

  it('no worker before the deadline, as the server gave up first (CANCELLED): the signal', () => {
    expect(fallsBackToSignal(new WorkflowUpdateRPCTimeoutOrCancelledError('Call cancelled', { cause: grpcError(1, 'Call cancelled') }))).toBe(true);
  });

  it('a worker whose code predates the update: the signal', () => {
    const cause = ApplicationFailure.create({ message: 'No registered handler for update: pause', type: 'ReferenceError' });
    expect(fallsBackToSignal(new WorkflowUpdateFailedError('Workflow Update failed', cause))).toBe(true);
  });

  it("the validator's refusal: no signal (the operator reads the reason)", () => {
    const cause = ApplicationFailure.create({ message: 'the run is already paused', nonRetryable: true });
    expect(fallsBackToSignal(new WorkflowUpdateFailedError('Workflow Update failed', cause))).toBe(false);
  });

  it('any other failure (the workflow not found, the server unreachable): no signal', () => {
    expect(fallsBackToSignal(grpcError(5, 'workflow not found'))).toBe(false);
    expect(fallsBackToSignal(grpcError(14, 'No connection established'))).toBe(false);
    expect(fallsBackToSignal(new Error('boom'))).toBe(false);
  });
});
