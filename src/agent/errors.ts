/**
 * The agent's typed errors. The HTTP layer maps `kind` to a status code (bad-request -> 400,
 * not-found -> 404) and writes `message` as the plain-text body, as Consul's agent endpoints do.
 */

export type AgentErrorKind = "bad-request" | "not-found";

/** A request the agent refuses: the message is Consul's wording where Consul has one. */
export class AgentError extends Error {
  override readonly name = "AgentError";
  constructor(readonly kind: AgentErrorKind, message: string) {
    super(message);
  }
}

/** Shorthand for a 400-class AgentError. */
export function badRequest(message: string): AgentError {
  return new AgentError("bad-request", message);
}

/** Shorthand for a 404-class AgentError. */
export function notFound(message: string): AgentError {
  return new AgentError("not-found", message);
}

/**
 * Formats several errors the way hashicorp/go-multierror does, which is what Consul writes for
 * `NodeService.Validate()` failures ("1 error occurred:\n\t* ...\n\n").
 */
export function multiError(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join("\n\t")}\n\n`;
}
