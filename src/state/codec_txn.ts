/** Encoding and decoding of `txn` state commands in the log's JSON form (see codec.ts). */
import type { TxnOp } from "../model/index.ts";
import { toBase64 } from "./bytes.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { bytesField, checkShape, isObj, optStr, optUint64, reqStr, serviceShape, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** The JSON form of a `txn` command: KV values as base64, everything else as it is. */
export function txnWire(cmd: Extract<StateCommand, { type: "txn" }>): unknown {
  const ops = cmd.ops.map((o) => (o.KV ? { KV: { ...o.KV, Value: o.KV.Value ? toBase64(o.KV.Value) : o.KV.Value } } : o));
  return { type: "txn", ops };
}

const KINDS = ["KV", "Node", "Service", "Check"] as const;

/**
 * A `txn` command: each op has exactly one of KV, Node, Service or Check, with a string Verb. KV ops
 * need a string Key (Value is base64); Node ops a Node object with a string Node; Service ops a
 * string Node and a Service with a string ID; Check ops a Check with string Node and CheckID.
 * Verbs are the store's to judge (an unknown one fails the transaction with Consul's text).
 */
export function decodeTxnCommand(raw: Obj): StateCommand {
  if (!Array.isArray(raw.ops)) bad("txn.ops", "must be an array");
  const ops = raw.ops.map((op, i): TxnOp => {
    const path = `txn.ops[${i}]`;
    if (!isObj(op)) bad(path, "must be an object");
    const kinds = KINDS.filter((k) => op[k] !== undefined && op[k] !== null);
    if (kinds.length !== 1) bad(path, "must have exactly one of KV, Node, Service or Check");
    const kind = kinds[0]!;
    const body = op[kind];
    const p = `${path}.${kind}`;
    if (!isObj(body)) bad(p, "must be an object");
    reqStr(body, "Verb", p);
    optUint64(body, "Index", p);
    switch (kind) {
      case "KV":
        if (typeof body.Key !== "string") bad(`${p}.Key`, "must be a string");
        optStr(body, "Session", p);
        optUint64(body, "Flags", p);
        return { KV: { ...body, Value: bytesField(body, "Value", p) } } as TxnOp;
      case "Node": {
        const n = body.Node;
        if (!isObj(n)) bad(`${p}.Node`, "must be an object");
        reqStr(n, "Node", `${p}.Node`);
        for (const k of ["ID", "Address", "Datacenter"]) optStr(n, k, `${p}.Node`);
        checkShape(n, `${p}.Node`, { TaggedAddresses: "strMap", Meta: "strMap" });
        break;
      }
      case "Service":
        reqStr(body, "Node", p);
        serviceShape(body.Service, `${p}.Service`);
        reqStr(body.Service as Obj, "ID", `${p}.Service`);
        break;
      case "Check": {
        const c = body.Check;
        if (!isObj(c)) bad(`${p}.Check`, "must be an object");
        reqStr(c, "Node", `${p}.Check`);
        reqStr(c, "CheckID", `${p}.Check`);
        for (const k of ["Name", "Status", "Notes", "Output", "ServiceID", "ServiceName", "Type"]) optStr(c, k, `${p}.Check`);
        if (typeof c.Status === "string" && !["", "passing", "warning", "critical"].includes(c.Status)) {
          bad(`${p}.Check.Status`, "must be passing, warning or critical");
        }
        checkShape(c, `${p}.Check`, { ServiceTags: "strArr", Definition: "obj" });
        break;
      }
    }
    return { [kind]: body } as unknown as TxnOp;
  });
  return { type: "txn", ops };
}
