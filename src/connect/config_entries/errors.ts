/**
 * The errors of config entry decoding, validation and graph checks. All three are the client's fault: the
 * HTTP layer answers 400 with `message` (Consul prefixes decoding errors with "Request decoding failed: ").
 */

/** Why an entry was refused: it could not be decoded, or it decoded but is invalid on its own. */
export type ConfigEntryErrorReason = "decode" | "validate";

/** A body that is not a config entry, or an entry that breaks a rule of its kind (Entry.Validate). */
export class ConfigEntryError extends Error {
  override readonly name = "ConfigEntryError";
  /** Always 400: the request is at fault. */
  readonly statusCode = 400;
  constructor(readonly reason: ConfigEntryErrorReason, message: string) {
    super(message);
  }
}

/**
 * structs.ConfigEntryGraphError: the entry is valid alone but the graph it would form is not (a redirect
 * cycle, mixed protocols, routing on a TCP service, an unknown subset). Thrown by the discovery chain
 * compiler and by validateEntryInGraph. Also an HTTP 400.
 */
export class ConfigEntryGraphError extends Error {
  override readonly name = "ConfigEntryGraphError";
  readonly statusCode = 400;
  constructor(message: string) {
    super(message);
  }
}
