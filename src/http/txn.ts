/**
 * PUT /v1/txn (Consul's agent/txn_endpoint.go and agent/consul/txn_endpoint.go, v1.8): KV, Node,
 * Service and Check operations applied atomically. A body of only read verbs (KV get, get-tree,
 * check-*; catalog get) goes to the read path (Consul's Txn.Read: `?dc`, `?stale`, `?consistent`,
 * never blocking, only X-Consul-KnownLeader and X-Consul-LastContact set); anything else is one Raft
 * write. 200 answers `{"Results": [...], "Errors": null}`, 409 `{"Results": null, "Errors": [{"OpIndex",
 * "What"}]}`; KV values are base64 and null for write verbs (Consul blanks them); Node, Service and
 * Check results are the stored objects. An operation naming none of the four is skipped, as Consul
 * skips it (OpIndex counts the operations kept).
 *
 * Before anything is proposed, Consul's preCheck runs on every catalog write op and fails the whole
 * transaction with 409 (nodePreApply: "Must provide node", "Bad node ID: ..."; servicePreApply:
 * NodeService.Validate, "Must provide service name with ID", "Invalid service address"; checkPreApply:
 * CheckID defaults to Name), with Causeway's field limits and check status check on top. An unknown
 * verb fails the same way, with the store's text. As Consul's convertOps, a Service op keeps only ID,
 * Service, Tags, Address, Meta, Port, Weights and EnableTagOverride (Kind, Proxy, Connect and
 * TaggedAddresses are dropped), a Node op's empty Datacenter becomes the agent's, and the compare index
 * of cas and delete-cas is the object's ModifyIndex.
 */
import type { Uint64 } from "../lib/index.ts";
import type { Context, Hono } from "hono";
import {
  MAX_KV_VALUE_BYTES, TXN_MAX_OPS, TXN_READ_VERBS, type TxnCatalogVerb, type TxnError, type TxnKVOp, type TxnKVVerb, type TxnOp,
  type TxnResult,
} from "../model/index.ts";
import { decodeGoSlice, map, parseGoJson, struct, uuidError } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { dirEntryBody } from "./kv.ts";
import { BODY_LIMITS, readBodyBytes } from "./body.ts";
import { checkOf, serviceOf } from "./catalog_register.ts";
import { HEALTH_CHECK, NODE_SERVICE, type RawCheck, type RawService } from "./catalog_schema.ts";
import { datacenterNameError } from "./datacenter.ts";
import { metaSizeError, tooLong } from "./field_limits.ts";
import { BadRequestError, parseReadOptions, type ReadOptions } from "./query_options.ts";
import { serveWrite, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { decodeMessage } from "./route_params.ts";

/** Consul's txn_max_req_len (default: the suggested Raft entry size, as kv_max_value_size). */
export const TXN_MAX_REQUEST_BYTES = BODY_LIMITS.txn;
const MAX_LEN_DOC = "https://www.consul.io/docs/agent/options.html#txn_max_req_len";
const WRITE_VERBS: ReadonlySet<string> = new Set<TxnKVVerb>(["set", "delete", "delete-cas", "delete-tree", "cas", "lock", "unlock"]);
const CATALOG_VERBS: ReadonlySet<string> = new Set<TxnCatalogVerb>(["set", "cas", "get", "delete", "delete-cas"]);
const INDEXES = { CreateIndex: "uint64", ModifyIndex: "uint64" } as const;

const TXN_OP = struct("api.TxnOp", {
  KV: struct("api.KVTxnOp", { Verb: "string", Key: "string", Value: "bytes", Flags: "uint64", Index: "uint64", Session: "string" }),
  Node: struct("api.NodeTxnOp", {
    Verb: "string",
    Node: struct("api.Node", {
      ID: "string", Node: "string", Address: "string", Datacenter: "string", TaggedAddresses: map("string"), Meta: map("string"), ...INDEXES,
    }),
  }),
  Service: struct("api.ServiceTxnOp", {
    Verb: "string",
    Node: "string",
    Service: struct("api.AgentService", { ...NODE_SERVICE.struct.fields, ContentHash: "string", Namespace: "string", ...INDEXES }),
  }),
  Check: struct("api.CheckTxnOp", {
    Verb: "string",
    Check: struct("api.HealthCheck", { ...HEALTH_CHECK.struct.fields, Namespace: "string", ...INDEXES }),
  }),
});

type Nil<T> = T | null | undefined;
interface Indexed { ModifyIndex?: Uint64 }
interface RawNode extends Indexed {
  ID?: string; Node?: string; Address?: string; Datacenter?: string; TaggedAddresses?: Nil<Record<string, string>>; Meta?: Nil<Record<string, string>>;
}

interface RawTxnOp {
  KV?: { Verb?: string; Key?: string; Value?: Uint8Array | null; Flags?: Uint64; Index?: Uint64; Session?: string };
  Node?: { Verb?: string; Node?: RawNode };
  Service?: { Verb?: string; Node?: string; Service?: RawService & Indexed };
  Check?: { Verb?: string; Check?: RawCheck & Indexed };
}

interface TxnAnswer {
  readonly Results: readonly TxnResult[] | null;
  readonly Errors: readonly TxnError[] | null;
}

/** Consul's TxnResult in JSON: the one field that is set (KV with its value in base64). */
function resultBody(r: TxnResult): unknown {
  if (r.KV) return { KV: dirEntryBody(r.KV) };
  if (r.Node) return { Node: r.Node };
  if (r.Service) return { Service: r.Service };
  return { Check: r.Check };
}

/** Consul's TxnResponse body: 409 when there are errors, Results null then and when there are none. */
function txnResponse(c: Context, r: TxnAnswer): Response {
  const conflict = (r.Errors?.length ?? 0) > 0;
  const results = !conflict && r.Results?.length ? r.Results.map(resultBody) : null;
  return jsonResponse(c, { Results: results, Errors: conflict ? r.Errors : null }, conflict ? 409 : 200);
}

/** A catalog verb as given; unknown ones are refused with the store's text ("unknown Node verb ..."). */
function catalogVerb(kind: "Node" | "Service" | "Check", verb: string | undefined): TxnCatalogVerb {
  if (!CATALOG_VERBS.has(verb ?? "")) throw new BadRequestError(`unknown ${kind} verb ${JSON.stringify(verb ?? "")}`);
  return verb as TxnCatalogVerb;
}

const withIndex = (i: Uint64 | undefined) => (i !== undefined ? { Index: i } : {});

/** A Node op; for writes, Consul's nodePreApply and Causeway's size limits. */
function nodeOp(raw: NonNullable<RawTxnOp["Node"]>, datacenter: string): TxnOp {
  const Verb = catalogVerb("Node", raw.Verb);
  const n = raw.Node ?? {};
  const node = {
    ID: n.ID ?? "", Node: n.Node ?? "", Address: n.Address ?? "", Datacenter: n.Datacenter || datacenter,
    TaggedAddresses: n.TaggedAddresses ?? {}, Meta: n.Meta ?? {},
  };
  if (Verb !== "get") {
    if (node.Node === "") throw new BadRequestError("Must provide node");
    const badId = node.ID === "" ? undefined : uuidError(node.ID);
    if (badId) throw new BadRequestError(`Bad node ID: ${badId}`);
    const limit = tooLong("Node name", node.Node) ?? datacenterNameError(node.Datacenter) ?? metaSizeError("Node meta", node.Meta);
    if (limit) throw new BadRequestError(limit);
  }
  return { Node: { Verb, Node: node, ...withIndex(n.ModifyIndex) } };
}

/** A Service op; for writes, Consul's servicePreApply on the fields convertOps keeps. */
function serviceOp(raw: NonNullable<RawTxnOp["Service"]>): TxnOp {
  const Verb = catalogVerb("Service", raw.Verb);
  const s = raw.Service ?? {};
  const Node = raw.Node ?? "";
  if (Verb === "get") return { Service: { Verb, Node, Service: { ID: s.ID ?? "" } } };
  const { ID, Service, Tags, Address, Meta, Port, Weights, EnableTagOverride } = s;
  const svc = serviceOf({ ID, Service, Tags, Address, Meta, Port, Weights, EnableTagOverride });
  return { Service: { Verb, Node, Service: svc, ...withIndex(s.ModifyIndex) } };
}

/** A Check op; for writes, Consul's checkPreApply (CheckID from Name) and Causeway's check limits. */
function checkOp(raw: NonNullable<RawTxnOp["Check"]>): TxnOp {
  const Verb = catalogVerb("Check", raw.Verb);
  const c = raw.Check ?? {};
  if (Verb === "get") return { Check: { Verb, Check: { Node: c.Node ?? "", CheckID: c.CheckID ?? "" } } };
  return { Check: { Verb, Check: checkOf(c, c.Node ?? ""), ...withIndex(c.ModifyIndex) } };
}

/** Decodes and checks the operations; a Response for every refusal (400, 409, 413). */
function opsOf(c: Context, body: string, datacenter: string): { ops: TxnOp[]; writes: number } | Response {
  let raw: RawTxnOp[];
  try {
    raw = decodeGoSlice<RawTxnOp>(parseGoJson(body), TXN_OP, "api.TxnOps");
  } catch (err) {
    return textError(c, 400, `Failed to parse body: ${decodeMessage(err)}`);
  }
  if (raw.length > TXN_MAX_OPS) return textError(c, 413, `Transaction contains too many operations (${raw.length} > ${TXN_MAX_OPS})`);
  const ops: TxnOp[] = [];
  const refused: TxnError[] = [];
  let writes = 0;
  for (const op of raw) {
    if (op.KV) {
      const { Verb = "", Key = "", Value, Flags, Index, Session } = op.KV;
      const size = Value?.byteLength ?? 0;
      if (size > MAX_KV_VALUE_BYTES) return textError(c, 413, `Value for key ${JSON.stringify(Key)} is too large (${size} > ${MAX_KV_VALUE_BYTES} bytes)`);
      if (WRITE_VERBS.has(Verb)) writes++;
      // The state store would fail the op with this text (Consul's txnKVS); nothing is written either way.
      else if (!TXN_READ_VERBS.has(Verb as TxnKVVerb)) refused.push({ OpIndex: ops.length, What: `unknown KV verb ${JSON.stringify(Verb)}` });
      const kv: TxnKVOp = {
        Verb: Verb as TxnKVVerb, Key,
        ...(Value ? { Value } : {}), ...(Flags !== undefined ? { Flags } : {}), ...withIndex(Index),
        ...(Session !== undefined ? { Session } : {}),
      };
      ops.push({ KV: kv });
      continue;
    }
    const kind = op.Node ? "Node" : op.Service ? "Service" : op.Check ? "Check" : undefined;
    if (!kind) continue;
    const verb = (op.Node ?? op.Service ?? op.Check)!.Verb;
    if (verb !== "get") writes++;
    try {
      ops.push(op.Node ? nodeOp(op.Node, datacenter) : op.Service ? serviceOp(op.Service) : checkOp(op.Check!));
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      refused.push({ OpIndex: ops.length, What: err.message });
      ops.push({ KV: { Verb: "get", Key: "" } }); // a placeholder keeping OpIndex in step; never proposed
    }
  }
  if (refused.length) return txnResponse(c, { Results: null, Errors: refused });
  return { ops, writes };
}

/** Mounts PUT /v1/txn. */
export function mountTxn(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/txn", async (c) => {
    let bytes: Uint8Array;
    try {
      bytes = await readBodyBytes(c, TXN_MAX_REQUEST_BYTES, { doc: MAX_LEN_DOC });
    } catch (err) {
      return errorResponse(c, err);
    }
    const decoded = opsOf(c, new TextDecoder().decode(bytes), deps.agent.datacenter);
    if (decoded instanceof Response) return decoded;
    const { ops, writes } = decoded;
    if (writes > 0) {
      return serveWrite(c, deps, { type: "txn", ops }, (r) =>
        r.type === "txn" ? txnResponse(c, r) : textError(c, 500, `unexpected result ${JSON.stringify(r.type)} for a transaction`));
    }
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    let options: ReadOptions;
    try {
      options = parseReadOptions(c, deps.random ?? (() => 0.5));
    } catch (err) {
      return errorResponse(c, err);
    }
    try {
      const out = await deps.state.read({ type: "txn-read", ops }, { ...options, minIndex: 0, maxWaitMs: 0 });
      c.header("X-Consul-KnownLeader", out.meta.knownLeader ? "true" : "false");
      c.header("X-Consul-LastContact", String(Math.max(0, Math.round(out.meta.lastContactMs))));
      return txnResponse(c, out.value);
    } catch (err) {
      return errorResponse(c, err);
    }
  });
}
