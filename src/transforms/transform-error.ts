/**
 * A chunk failed on what it computed or wrote (a TypeScript transform that threw, a reconciliation
 * or before-image mismatch): `message` may quote row values (ledger only), `summary` does not.
 */
export class TransformError extends Error {
  constructor(
    message: string,
    readonly summary: string,
  ) {
    super(message);
  }
}
