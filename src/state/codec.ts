/**
 * The log encoding of state commands: UTF-8 JSON, with KV values as base64 strings (single-key KV
 * writes use the binary form of codec_kv.ts; a first byte tells them apart). decodeCommand
 * checks the shape of everything it returns (types of every known field, required fields, verbs) and
 * throws StateCommandError naming the offending path; semantic checks (unknown session behavior,
 * missing node...) are the store's, with Consul's messages.
 */
import type { KVWriteVerb } from "../model/index.ts";
import { toBase64 } from "./bytes.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { decodeAclCommand } from "./codec_acl.ts";
import { decodeCoordinateBatchCommand } from "./codec_coordinate.ts";
import { decodeCaCommand, decodeConfigEntryCommand, decodeIntentionCommand } from "./codec_connect.ts";
import { decodeAutopilotCommand, decodePreparedQueryCommand } from "./codec_prepared_query.ts";
import { decodeFederationStateCommand } from "./codec_federation_state.ts";
import { decodeKvCommand, encodeKvCommand, KV_BINARY_MARKER } from "./codec_kv.ts";
import { decodeRestore, decodeRestoreStage, restoreWire } from "./codec_restore.ts";
import { decodeTxnCommand, txnWire } from "./codec_txn.ts";
import { bytesField, checkShape, healthCheckShape, isObj, optNum, optStr, optUint64, reqStr, serviceShape, type Obj } from "./codec_shapes.ts";
import { parseExact, stringifyExact } from "../lib/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

const KV_VERBS: ReadonlySet<string> = new Set<KVWriteVerb>(["set", "cas", "lock", "unlock", "delete", "delete-cas", "delete-tree"]);

const b64 = (v: Uint8Array | null | undefined) => (v ? toBase64(v) : v);

/** Encodes a command for the Raft log (single-key KV writes in the compact binary form of codec_kv.ts). */
export function encodeCommand(cmd: StateCommand): Uint8Array {
  // The binary form carries safe integers; a flags or compare index past 2^53 goes as exact JSON.
  if (cmd.type === "kv" && fitsBinary(cmd.entry.Flags) && fitsBinary(cmd.entry.ModifyIndex)) return encodeKvCommand(cmd.op, cmd.entry);
  let wire: unknown = cmd;
  if (cmd.type === "restore" || cmd.type === "restore-stage") wire = restoreWire(cmd);
  else if (cmd.type === "kv") wire = { ...cmd, entry: { ...cmd.entry, Value: b64(cmd.entry.Value) } };
  else if (cmd.type === "txn") wire = txnWire(cmd);
  return enc.encode(stringifyExact(wire));
}

const fitsBinary = (n: number | bigint | undefined) => n === undefined || (typeof n === "number" && n < Number.MAX_SAFE_INTEGER);

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** Decodes and validates a command; throws StateCommandError on anything that is not a valid command. */
export function decodeCommand(bytes: Uint8Array): StateCommand {
  if (bytes[0] === KV_BINARY_MARKER) return decodeKvCommand(bytes);
  let raw: unknown;
  try {
    raw = parseExact(dec.decode(bytes));
  } catch {
    throw new StateCommandError("invalid state command: not UTF-8 JSON");
  }
  if (!isObj(raw)) bad("command", "must be an object");
  switch (raw.type) {
    case "register": {
      const req = raw.req;
      if (!isObj(req)) bad("register.req", "must be an object");
      reqStr(req, "Node", "register.req");
      for (const k of ["Datacenter", "ID", "Address"]) optStr(req, k, "register.req");
      checkShape(req, "register.req", { TaggedAddresses: "strMap", NodeMeta: "strMap", SkipNodeUpdate: "bool" });
      if (req.Service !== undefined) serviceShape(req.Service, "register.req.Service");
      if (req.Check !== undefined) healthCheckShape(req.Check, "register.req.Check");
      if (req.Checks !== undefined && req.Checks !== null) {
        if (!Array.isArray(req.Checks)) bad("register.req.Checks", "must be an array");
        req.Checks.forEach((c, i) => healthCheckShape(c, `register.req.Checks[${i}]`));
      }
      return raw as unknown as StateCommand;
    }
    case "deregister": {
      const req = raw.req;
      if (!isObj(req)) bad("deregister.req", "must be an object");
      reqStr(req, "Node", "deregister.req");
      for (const k of ["Datacenter", "ServiceID", "CheckID"]) optStr(req, k, "deregister.req");
      return raw as unknown as StateCommand;
    }
    case "kv": {
      if (typeof raw.op !== "string" || !KV_VERBS.has(raw.op)) bad("kv.op", `must be one of ${[...KV_VERBS].join(", ")}`);
      const e = raw.entry;
      if (!isObj(e)) bad("kv.entry", "must be an object");
      reqStr(e, "Key", "kv.entry");
      optStr(e, "Session", "kv.entry");
      optUint64(e, "Flags", "kv.entry");
      optUint64(e, "ModifyIndex", "kv.entry");
      return { type: "kv", op: raw.op as KVWriteVerb, entry: { ...e, Value: bytesField(e, "Value", "kv.entry") } } as StateCommand;
    }
    case "session":
      return decodeSession(raw);
    case "config-entry":
      return decodeConfigEntryCommand(raw);
    case "intention":
      return decodeIntentionCommand(raw);
    case "ca":
      return decodeCaCommand(raw);
    case "txn":
      return decodeTxnCommand(raw);
    case "prepared-query":
      return decodePreparedQueryCommand(raw);
    case "autopilot":
      return decodeAutopilotCommand(raw);
    case "coordinate-batch":
      return decodeCoordinateBatchCommand(raw);
    case "federation-state":
      return decodeFederationStateCommand(raw);
    case "acl-token":
    case "acl-bootstrap":
    case "acl-policy":
    case "acl-role":
    case "acl-auth-method":
    case "acl-binding-rule":
      return decodeAclCommand(raw);
    case "restore":
      return decodeRestore(raw);
    case "restore-stage":
      return decodeRestoreStage(raw);
    case "tombstone-reap":
      if (typeof raw.reapIndex !== "number" || !Number.isSafeInteger(raw.reapIndex) || raw.reapIndex < 0) {
        bad("tombstone-reap.reapIndex", "must be a non-negative integer");
      }
      return { type: "tombstone-reap", reapIndex: raw.reapIndex };
    default:
      return bad("type", `${JSON.stringify(raw.type)} is not a known command type`);
  }
}

function decodeSession(raw: Obj): StateCommand {
  if (raw.op === "destroy") {
    reqStr(raw, "id", "session");
    return { type: "session", op: "destroy", id: raw.id as string };
  }
  if (raw.op !== "create") bad("session.op", "must be create or destroy");
  sessionShape(raw.session, "session.session");
  return raw as unknown as StateCommand;
}

/** A Session as a create command (or a snapshot) carries it; throws StateCommandError naming the path. */
export function sessionShape(s: unknown, path: string): asserts s is Obj {
  if (!isObj(s)) bad(path, "must be an object");
  reqStr(s, "ID", path);
  reqStr(s, "Node", path);
  for (const k of ["Name", "Behavior", "TTL"]) optStr(s, k, path);
  optNum(s, "LockDelay", path);
  checkShape(s, path, { NodeChecks: "strArr" });
  if (s.ServiceChecks !== undefined && s.ServiceChecks !== null) {
    if (!Array.isArray(s.ServiceChecks)) bad(`${path}.ServiceChecks`, "must be an array");
    s.ServiceChecks.forEach((c, i) => {
      if (!isObj(c)) bad(`${path}.ServiceChecks[${i}]`, "must be an object");
      reqStr(c, "ID", `${path}.ServiceChecks[${i}]`);
    });
  }
}
