/**
 * What Temporal said, in the operator's words. The SDK wraps a refused call in an error that
 * names only the call ("Failed to start Workflow"); the server's status and reason sit in its
 * cause. Every error the CLI reports carries them.
 */
import { status, type ServiceError as GrpcServiceError } from '@grpc/grpc-js';
// the SDK's own error module, not its index: every CLI error passes through here, and the index
// loads the whole client and its protobufs (a third of a second) for commands that never connect
import { isGrpcServiceError, ServiceError } from '@temporalio/client/lib/errors';

/** The gRPC error under an SDK error, or the error itself when it is one. */
export function grpcCause(err: unknown): GrpcServiceError | undefined {
  if (isGrpcServiceError(err)) return err;
  if (err instanceof ServiceError && isGrpcServiceError(err.cause)) return err.cause;
  return undefined;
}

/** `Failed to start Workflow: INVALID_ARGUMENT: …` for a wrapped call; undefined for anything else. */
export function temporalErrorMessage(err: unknown): string | undefined {
  if (!(err instanceof ServiceError)) return undefined;
  const grpc = grpcCause(err);
  if (!grpc) return undefined;
  return `${err.message}: ${statusName(grpc.code)}: ${grpc.details || grpc.message}`;
}

export function statusName(code: number): string {
  return status[code] ?? `gRPC status ${code}`;
}
