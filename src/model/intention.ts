/**
 * Connect intentions in Consul 1.8's wire shape (agent/structs/intention.go). Field order follows the Go
 * struct so that JSON.stringify of a value built in that order matches Consul's output byte for byte.
 * Precedence, hashing, validation and matching live in src/connect/intentions; these are the plain types
 * the state store holds.
 */

/** What an intention decides for a matching connection. */
export type IntentionAction = "allow" | "deny";

/** The only source type Consul 1.8 knows (structs.IntentionSourceConsul). */
export type IntentionSourceType = "consul";

/**
 * One stored intention as Consul 1.8 serves it (GET /v1/connect/intentions[/:id]). `Precedence` and `Hash`
 * are computed by the server on every write; `CreatedAt` / `UpdatedAt` are Go RFC3339Nano strings;
 * `Hash` is Go's base64 of the 32-byte BLAKE2b digest (structs.Intention.SetHash); `Meta` is never null
 * once stored (state store intentionSetTxn forces an empty map). DefaultAddr / DefaultPort are unused by
 * Consul but present on the wire.
 */
export interface Intention {
  readonly ID: string;
  readonly Description: string;
  readonly SourceNS: string;
  readonly SourceName: string;
  readonly DestinationNS: string;
  readonly DestinationName: string;
  readonly SourceType: IntentionSourceType;
  readonly Action: IntentionAction;
  readonly DefaultAddr: string;
  readonly DefaultPort: number;
  readonly Meta: Readonly<Record<string, string>>;
  readonly Precedence: number;
  readonly CreatedAt: string;
  readonly UpdatedAt: string;
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}
