/**
 * Loaded by path (the worker bundles it into the workflow sandbox) when payloads are
 * encrypted: moves failure messages and stack traces into an encoded payload, so the codec
 * encrypts them as well. Workflow-safe: it imports nothing Node-only.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
