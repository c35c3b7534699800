/**
 * The one error this module throws. `code` tells the HTTP layer how Consul 1.8 answers it:
 * - "decode": the body did not decode (encoding/json's text). Consul's POST /v1/connect/intentions wraps it
 *   as "Failed to decode request body: <msg>"; PUT /v1/connect/intentions/:id answers 400
 *   "Request decode failed: <msg>".
 * - "invalid": the Intention.Apply / Intention.Check RPC refused the request (validation multierror,
 *   "ID must be empty when creating a new intention", "Cannot modify non-existent intention: '<id>'",
 *   "duplicate intention found: ...", "unsupported SourceType: ..."). Consul surfaces RPC errors as HTTP 500
 *   with the message as the body.
 * - "bad-request": an agent-side BadRequestError (HTTP 400), e.g. the /v1/agent/connect/authorize input
 *   checks and the ?by= / ?name= parsing of /match and /check.
 */
export type IntentionErrorCode = "decode" | "invalid" | "bad-request";

export class IntentionError extends Error {
  override readonly name = "IntentionError";
  constructor(readonly code: IntentionErrorCode, message: string) {
    super(message);
  }
}
