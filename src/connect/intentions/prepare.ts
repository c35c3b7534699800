/**
 * The server side of a create or update (Consul 1.8 agent/consul/intention_endpoint.go Apply and
 * agent/consul/state/intention.go intentionSetTxn), as pure functions: the caller injects the new ID and
 * "now", and owns the table (existence, duplicates, raft indexes).
 */
import { blake2b } from "@noble/hashes/blake2.js";
import { IntentionError } from "./errors.ts";
import { compareGoStrings, intentionPrecedence, intentionString } from "./precedence.ts";
import { formatMultiError, validateIntention } from "./validate.ts";
import { INTENTION_DEFAULT_NAMESPACE, type Intention, type IntentionAction, type IntentionBody } from "./types.ts";

/** Inputs Consul takes from the environment: a fresh UUID (creates only) and the current time. */
export interface PrepareContext {
  /** Milliseconds since the epoch (Consul uses time.Now().UTC()). */
  readonly nowMs: number;
}

/**
 * Go's time.Time JSON form (RFC3339Nano, UTC): fractional seconds with trailing zeros trimmed, none when
 * zero. "2020-06-01T10:00:00.12Z", "2020-06-01T10:00:00Z".
 */
export function formatGoTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.replace(/\.(\d{3})Z$/, (_, f: string) => (f === "000" ? "Z" : `.${f.replace(/0+$/, "")}Z`));
}

const utf8 = new TextEncoder();

/**
 * Consul's Intention.SetHash: BLAKE2b-256 over ID, Description, SourceNS, SourceName, DestinationNS,
 * DestinationName, SourceType, Action (raw bytes, no separators), Precedence as a little-endian uint64,
 * then each Meta key and value in sorted key order. Returned in Go's JSON form of []byte (std base64).
 * Consul uses it only for change detection in intention replication.
 */
export function intentionHash(x: Omit<Intention, "Hash" | "CreatedAt" | "UpdatedAt" | "CreateIndex" | "ModifyIndex">): string {
  const h = blake2b.create({ dkLen: 32 });
  for (const s of [x.ID, x.Description, x.SourceNS, x.SourceName, x.DestinationNS, x.DestinationName, x.SourceType, x.Action]) {
    h.update(utf8.encode(s));
  }
  const prec = new Uint8Array(8);
  new DataView(prec.buffer).setBigUint64(0, BigInt.asUintN(64, BigInt(x.Precedence)), true);
  h.update(prec);
  for (const k of Object.keys(x.Meta).sort(compareGoStrings)) {
    h.update(utf8.encode(k));
    h.update(utf8.encode(x.Meta[k]!));
  }
  let bin = "";
  for (const b of h.digest()) bin += String.fromCharCode(b);
  return btoa(bin);
}

/**
 * Defaulting (empty SourceNS / DestinationNS -> "default", the OSS DefaultNamespaces; empty SourceType ->
 * "consul"), precedence, validation and hash, shared by create and update. Throws IntentionError("invalid")
 * with go-multierror's text when Validate fails.
 */
function finish(id: string, body: IntentionBody, createdAt: string, updatedAt: string): Intention {
  const fields = {
    Description: body.Description ?? "",
    SourceNS: body.SourceNS || INTENTION_DEFAULT_NAMESPACE,
    SourceName: body.SourceName ?? "",
    DestinationNS: body.DestinationNS || INTENTION_DEFAULT_NAMESPACE,
    DestinationName: body.DestinationName ?? "",
    SourceType: body.SourceType || "consul",
    Action: body.Action ?? "",
    Meta: body.Meta ?? null,
  };
  const errors = validateIntention(fields);
  if (errors.length > 0) throw new IntentionError("invalid", formatMultiError(errors));
  const base = {
    ID: id,
    Description: fields.Description,
    SourceNS: fields.SourceNS,
    SourceName: fields.SourceName,
    DestinationNS: fields.DestinationNS,
    DestinationName: fields.DestinationName,
    SourceType: "consul" as const,
    Action: fields.Action as IntentionAction,
    DefaultAddr: body.DefaultAddr ?? "",
    DefaultPort: body.DefaultPort ?? 0,
    // intentionSetTxn: "We always force meta to be non-nil so that we its an empty map."
    Meta: { ...(fields.Meta ?? {}) },
    Precedence: intentionPrecedence(fields),
  };
  return { ...base, CreatedAt: createdAt, UpdatedAt: updatedAt, Hash: intentionHash(base), CreateIndex: 0, ModifyIndex: 0 };
}

/**
 * A create (POST /v1/connect/intentions): the body must not carry an ID ("ID must be empty when
 * creating a new intention"); `newId` is the fresh UUID the caller generated (Consul retries until it is
 * unused). CreatedAt = UpdatedAt = now. CreateIndex / ModifyIndex are left 0 for the state table to set
 * (both to the raft index of the write).
 */
export function prepareIntentionCreate(body: IntentionBody, newId: string, ctx: PrepareContext): Intention {
  if (body.ID !== undefined && body.ID !== "") throw new IntentionError("invalid", "ID must be empty when creating a new intention");
  const now = formatGoTime(ctx.nowMs);
  return finish(newId, body, now, now);
}

/**
 * An update (PUT /v1/connect/intentions/:id): `id` comes from the URL (it overrides any body ID), and the
 * stored intention must exist ("Cannot modify non-existent intention: '<id>'"). The update replaces every
 * field (no merge with the stored one), keeps the stored CreatedAt (and the table keeps CreateIndex) and
 * sets UpdatedAt = now.
 */
export function prepareIntentionUpdate(body: IntentionBody, id: string, existing: Intention | undefined, ctx: PrepareContext): Intention {
  if (existing === undefined) throw new IntentionError("invalid", `Cannot modify non-existent intention: '${id}'`);
  return { ...finish(id, body, existing.CreatedAt, formatGoTime(ctx.nowMs)), CreateIndex: existing.CreateIndex };
}

/** A delete's existence check (Intention.Apply, op delete): "Cannot delete non-existent intention: '<id>'". */
export function checkIntentionDelete(id: string, existing: Intention | undefined): void {
  if (existing === undefined) throw new IntentionError("invalid", `Cannot delete non-existent intention: '${id}'`);
}

/**
 * The state store's uniqueness rule (memdb index "source_destination", Lowercase: true): no two intentions
 * may share the 4-tuple compared case-insensitively, unless it is the same ID (an update). Throws
 * IntentionError("invalid") with "duplicate intention found: <String() of the stored one>".
 */
export function checkIntentionDuplicate(intentions: Iterable<Intention>, candidate: Intention): void {
  const key = tupleKey(candidate);
  for (const ixn of intentions) {
    if (ixn.ID !== candidate.ID && tupleKey(ixn) === key) {
      throw new IntentionError("invalid", `duplicate intention found: ${intentionString(ixn)}`);
    }
  }
}

function tupleKey(x: Intention): string {
  return [x.SourceNS, x.SourceName, x.DestinationNS, x.DestinationName].map((s) => s.toLowerCase()).join("\u0000");
}
