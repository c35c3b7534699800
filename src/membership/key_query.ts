/**
 * Cluster-wide keyring management over serf queries (hashicorp/serf serf/internal_query.go and
 * serf/keymanager.go): the internal queries `_serf_install-key`, `_serf_use-key`, `_serf_remove-key`
 * and `_serf_list-keys`, each member's answer to them, and the originator's aggregation of the answers.
 *
 * Member side (`handleInternalQuery`): applies the operation to the member's own Keyring, persists it
 * through the injected hook (serf writeKeyringFile), and answers `{result, message, keys, primaryKey}`.
 * Error messages are memberlist's and serf's ("Removing the primary key is not allowed", ...).
 *
 * Originator side (`KeyResponseCollector`): counts responses, errors and installed keys; done early once
 * every live member answered; then `finish` gives serf's error ("1/3 nodes reported failure", or
 * "2/3 nodes reported success" when some did not answer before the deadline).
 *
 * Wire format (inside the query payload): request = u8 1, u16-prefixed raw key (empty for list);
 * response = u8 2, u8 result, str message, u16 key count, str keys (base64), str primary key.
 */
import { GossipKey, KeyringError, type Keyring } from "./keyring.ts";
import { CodecError, Reader, Writer } from "./wire.ts";

export type KeyOperation = "install" | "use" | "remove" | "list";

/** serf's internal query names. */
export const KEY_QUERY_NAMES: Readonly<Record<KeyOperation, string>> = Object.freeze({
  install: "_serf_install-key", use: "_serf_use-key", remove: "_serf_remove-key", list: "_serf_list-keys",
});

const KEY_REQUEST = 1;
const KEY_RESPONSE = 2;

/** The keyring an agent's pool manages, and how a change is made durable (serf KeyringFile). */
export interface KeyringHooks {
  /** Absent when encryption is not enabled. */
  readonly keyring?: Keyring;
  /** Called after every successful change; a throw becomes the member's error message. */
  readonly persist?: (keyring: Keyring) => void;
}

/** One member's answer (serf nodeKeyResponse). */
export interface NodeKeyResponse {
  readonly result: boolean;
  readonly message: string;
  readonly keys: readonly string[];
  readonly primaryKey: string;
}

/** The aggregate of a key operation (serf KeyResponse, plus its error). */
export interface KeyResponse {
  /** Node name -> error or warning from that node. */
  readonly messages: Readonly<Record<string, string>>;
  /** Live members when the query started (memberlist NumMembers). */
  readonly numNodes: number;
  readonly numResp: number;
  readonly numErr: number;
  /** Base64 key -> number of members that reported it installed (list only). */
  readonly keys: Readonly<Record<string, number>>;
  /** Base64 key -> number of members using it as primary (list only). */
  readonly primaryKeys: Readonly<Record<string, number>>;
  /** Undefined on success; else serf's error. */
  readonly error?: string;
}

/**
 * The query to send for an operation. `key` (base64) is required except for list. Throws
 * InvalidKeyError for a key that is not valid base64 of 16, 24 or 32 bytes (checked before sending).
 */
export function keyQuery(op: KeyOperation, key?: string): { name: string; payload: Uint8Array } {
  const raw = op === "list" ? new Uint8Array(0) : GossipKey.fromBase64(key ?? "").bytes();
  return { name: KEY_QUERY_NAMES[op], payload: new Writer().u8(KEY_REQUEST).bytes16(raw).finish() };
}

/** Encodes a member's answer (see the module comment for the layout). */
export function encodeKeyResponse(r: NodeKeyResponse): Uint8Array {
  const w = new Writer().u8(KEY_RESPONSE).u8(r.result ? 1 : 0).str(r.message).u16(r.keys.length);
  for (const k of r.keys) w.str(k);
  return w.str(r.primaryKey).finish();
}

/** Throws CodecError on anything but a well-formed key response. */
export function decodeKeyResponse(b: Uint8Array): NodeKeyResponse {
  const r = new Reader(b, "key response");
  if (r.u8() !== KEY_RESPONSE) throw new CodecError("Invalid key query response type");
  const result = r.bool(), message = r.str(), keys: string[] = [];
  for (let n = r.u16(); n > 0; n--) keys.push(r.str());
  const primaryKey = r.str();
  r.end();
  return { result, message, keys, primaryKey };
}

/**
 * serfQueries.handleQuery for the key queries: returns the response payload (at most `maxPayload`
 * bytes; a long key list is truncated with serf's message), or undefined for an internal query that
 * gets none (`_serf_ping` and unknown ones).
 */
export function handleInternalQuery(name: string, payload: Uint8Array, hooks: KeyringHooks, maxPayload: number): Uint8Array | undefined {
  const op = (Object.keys(KEY_QUERY_NAMES) as KeyOperation[]).find((o) => KEY_QUERY_NAMES[o] === name);
  if (op === undefined) return undefined;
  const fail = (message: string) => encodeKeyResponse({ result: false, message, keys: [], primaryKey: "" });
  let key: Uint8Array;
  try {
    const r = new Reader(payload, "key request");
    if (r.u8() !== KEY_REQUEST) throw new CodecError("key request: wrong type");
    key = r.bytes16();
    r.end();
  } catch (err) {
    if (!(err instanceof CodecError)) throw err;
    return fail("Failed to decode key request");
  }
  const { keyring } = hooks;
  if (op === "list") {
    if (keyring === undefined) return fail("Keyring is empty (encryption not enabled)");
    return listResponse(keyring.exportKeys(), maxPayload);
  }
  if (keyring === undefined) return fail("No keyring to modify (encryption not enabled)");
  try {
    const k = GossipKey.fromBytes(key);
    if (op === "install") keyring.install(k);
    else if (op === "use") keyring.use(k);
    else keyring.remove(k);
  } catch (err) {
    return fail(memberlistMessage(op, err));
  }
  try {
    hooks.persist?.(keyring);
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  return encodeKeyResponse({ result: true, message: "", keys: [], primaryKey: "" });
}

/** memberlist keyring.go's wording for a refused change. */
function memberlistMessage(op: KeyOperation, err: unknown): string {
  if (op === "use") return "Requested key is not in the keyring";
  return err instanceof KeyringError ? "Removing the primary key is not allowed" : "key size must be 16, 24 or 32 bytes";
}

/** serf keyListResponseWithCorrectSize: drops keys from the end until the response fits. */
function listResponse(keys: readonly string[], maxPayload: number): Uint8Array {
  for (let n = keys.length; n >= 0; n--) {
    const message = n < keys.length ? `truncated key list response, showing first ${n} of ${keys.length} keys` : "";
    const b = encodeKeyResponse({ result: true, message, keys: keys.slice(0, n), primaryKey: keys[0] ?? "" });
    if (b.length <= maxPayload) return b;
  }
  return encodeKeyResponse({ result: false, message: "Failed to truncate response so that it fits into message", keys: [], primaryKey: "" });
}

/** serf streamKeyResp + the checks at the end of handleKeyRequest. */
export class KeyResponseCollector {
  private readonly messages: Record<string, string> = {};
  private readonly keys: Record<string, number> = {};
  private readonly primaryKeys: Record<string, number> = {};
  private numResp = 0;
  private numErr = 0;

  constructor(readonly numNodes: number) {}

  /** Adds one member's response. Returns true once every live member answered (the query may close). */
  add(from: string, payload: Uint8Array): boolean {
    this.numResp++;
    let r: NodeKeyResponse | undefined;
    try {
      r = decodeKeyResponse(payload);
    } catch (err) {
      if (!(err instanceof CodecError)) throw err;
      this.messages[from] = payload[0] === KEY_RESPONSE ? "Failed to decode key query response" : "Invalid key query response type";
      this.numErr++;
    }
    if (r !== undefined) {
      if (!r.result) this.numErr++;
      if (r.message !== "") this.messages[from] = r.message;
      for (const k of r.keys) this.keys[k] = (this.keys[k] ?? 0) + 1;
      if (r.primaryKey !== "") this.primaryKeys[r.primaryKey] = (this.primaryKeys[r.primaryKey] ?? 0) + 1;
    }
    return this.numResp >= this.numNodes;
  }

  /** The aggregate; `error` as serf's handleKeyRequest reports it. */
  finish(): KeyResponse {
    const { numNodes, numResp, numErr } = this;
    const error = numErr !== 0 ? `${numErr}/${numNodes} nodes reported failure`
      : numResp !== numNodes ? `${numResp}/${numNodes} nodes reported success` : undefined;
    const sorted = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { messages: sorted(this.messages), numNodes, numResp, numErr, keys: sorted(this.keys), primaryKeys: sorted(this.primaryKeys), ...(error === undefined ? {} : { error }) };
  }
}
