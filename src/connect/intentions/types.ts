/**
 * Connect intentions: constants and the request shapes of the pure core. The stored `Intention` and its
 * member types live in src/model/intention.ts (so the state store can hold them) and are re-exported here.
 */

/** The wildcard value of a namespace or name (structs.IntentionWildcard). Only a whole value may be "*". */
export const INTENTION_WILDCARD = "*";

/** The namespace Consul OSS fills in when SourceNS / DestinationNS is empty (structs.IntentionDefaultNamespace). */
export const INTENTION_DEFAULT_NAMESPACE = "default";

/** Consul's opaque-metadata limits (agent/structs/structs.go): also applied to Description (as a value). */
export const INTENTION_META_MAX_PAIRS = 64;
export const INTENTION_META_KEY_MAX_LENGTH = 128;
export const INTENTION_META_VALUE_MAX_LENGTH = 512;

export type { Intention, IntentionAction, IntentionSourceType } from "../../model/index.ts";

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
