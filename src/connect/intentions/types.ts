/**
 * Connect intentions in Consul 1.8's wire shape (agent/structs/intention.go). Field order follows the Go
 * struct so that JSON.stringify of a value built by this module matches Consul's output byte for byte.
 */

/** The wildcard value of a namespace or name (structs.IntentionWildcard). Only a whole value may be "*". */
export const INTENTION_WILDCARD = "*";

/** The namespace Consul OSS fills in when SourceNS / DestinationNS is empty (structs.IntentionDefaultNamespace). */
export const INTENTION_DEFAULT_NAMESPACE = "default";

/** Consul's opaque-metadata limits (agent/structs/structs.go): also applied to Description (as a value). */
export const INTENTION_META_MAX_PAIRS = 64;
export const INTENTION_META_KEY_MAX_LENGTH = 128;
export const INTENTION_META_VALUE_MAX_LENGTH = 512;

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

/**
 * A decoded create/update body: every field as the client sent it (absent fields are undefined), before
 * defaulting and validation. Action and SourceType are free strings here because validation, not
 * decoding, rejects bad values (Consul's "Action must be set to 'allow' or 'deny'").
 */
export interface IntentionBody {
  readonly ID?: string;
  readonly Description?: string;
  readonly SourceNS?: string;
  readonly SourceName?: string;
  readonly DestinationNS?: string;
  readonly DestinationName?: string;
  readonly SourceType?: string;
  readonly Action?: string;
  readonly DefaultAddr?: string;
  readonly DefaultPort?: number;
  readonly Meta?: Readonly<Record<string, string>> | null;
}

/** Which side of an intention a match query looks at (structs.IntentionMatchType). */
export type IntentionMatchType = "source" | "destination";

/** One namespace/name pair to match; either may be the wildcard (structs.IntentionMatchEntry). */
export interface IntentionMatchEntry {
  readonly namespace: string;
  readonly name: string;
}

export interface IntentionMatchQuery {
  readonly type: IntentionMatchType;
  readonly entries: readonly IntentionMatchEntry[];
}
