/**
 * PUT /v1/txn (Consul's agent/txn_endpoint.go, v1.8): KV operations applied atomically. A body of only
 * read verbs goes to the read path (Consul's Txn.Read: `?dc`, `?stale`, `?consistent`, never blocking,
 * only X-Consul-KnownLeader and X-Consul-LastContact set); anything else is one Raft write. 200 answers
 * `{"Results": [...], "Errors": null}`, 409 `{"Results": null, "Errors": [{"OpIndex", "What"}]}`; values
 * are base64 and null for write verbs (Consul blanks them). Only KV operations are supported: a Node,
 * Service or Check operation is refused with 400; an operation naming none is skipped, as Consul skips it.
 */
import type { Uint64 } from "../lib/index.ts";
import type { Context, Hono } from "hono";
import { MAX_KV_VALUE_BYTES, TXN_MAX_OPS, TXN_READ_VERBS, type TxnError, type TxnKVOp, type TxnKVVerb, type TxnOp, type TxnResult } from "../model/index.ts";
import { decodeGoSlice, parseGoJson, struct } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { dirEntryBody } from "./kv.ts";
import { BODY_LIMITS, readBodyBytes } from "./body.ts";
import { parseReadOptions, type ReadOptions } from "./query_options.ts";
import { serveWrite, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { decodeMessage } from "./route_params.ts";

/** Consul's txn_max_req_len (default: the suggested Raft entry size, as kv_max_value_size). */
export const TXN_MAX_REQUEST_BYTES = BODY_LIMITS.txn;
const MAX_LEN_DOC = "https://www.consul.io/docs/agent/options.html#txn_max_req_len";
const WRITE_VERBS: ReadonlySet<string> = new Set<TxnKVVerb>(["set", "delete", "delete-cas", "delete-tree", "cas", "lock", "unlock"]);

const TXN_OP = struct("api.TxnOp", {
  KV: struct("api.KVTxnOp", { Verb: "string", Key: "string", Value: "bytes", Flags: "uint64", Index: "uint64", Session: "string" }),
  Node: "any",
  Service: "any",
  Check: "any",
});

interface RawTxnOp {
  KV?: { Verb?: string; Key?: string; Value?: Uint8Array | null; Flags?: Uint64; Index?: Uint64; Session?: string };
  Node?: unknown;
  Service?: unknown;
  Check?: unknown;
}

interface TxnAnswer {
  readonly Results: readonly TxnResult[] | null;
  readonly Errors: readonly TxnError[] | null;
}

/** Consul's TxnResponse body: 409 when there are errors, Results null then and when there are none. */
function txnResponse(c: Context, r: TxnAnswer): Response {
  const conflict = (r.Errors?.length ?? 0) > 0;
  const results = !conflict && r.Results?.length ? r.Results.map((x) => ({ KV: dirEntryBody(x.KV) })) : null;
  return jsonResponse(c, { Results: results, Errors: conflict ? r.Errors : null }, conflict ? 409 : 200);
}

/** Decodes and checks the operations; a Response for every refusal (400, 409, 413). */
function opsOf(c: Context, body: string): { ops: TxnOp[]; writes: number } | Response {
  let raw: RawTxnOp[];
  try {
    raw = decodeGoSlice<RawTxnOp>(parseGoJson(body), TXN_OP, "api.TxnOps");
  } catch (err) {
    return textError(c, 400, `Failed to parse body: ${decodeMessage(err)}`);
  }
  if (raw.length > TXN_MAX_OPS) return textError(c, 413, `Transaction contains too many operations (${raw.length} > ${TXN_MAX_OPS})`);
  const ops: TxnOp[] = [];
  const unknown: TxnError[] = [];
  let writes = 0;
  for (const [i, op] of raw.entries()) {
    if (!op.KV) {
      if (op.Node != null || op.Service != null || op.Check != null) {
        return textError(c, 400, `Failed to parse body: operation ${i} is not a KV operation; only KV operations are supported`);
      }
      continue;
    }
    const { Verb = "", Key = "", Value, Flags, Index, Session } = op.KV;
    const size = Value?.byteLength ?? 0;
    if (size > MAX_KV_VALUE_BYTES) return textError(c, 413, `Value for key ${JSON.stringify(Key)} is too large (${size} > ${MAX_KV_VALUE_BYTES} bytes)`);
    if (WRITE_VERBS.has(Verb)) writes++;
    // The state store would fail the op with this text (Consul's txnKVS); nothing is written either way.
    else if (!TXN_READ_VERBS.has(Verb as TxnKVVerb)) unknown.push({ OpIndex: ops.length, What: `unknown KV verb ${JSON.stringify(Verb)}` });
    const kv: TxnKVOp = {
      Verb: Verb as TxnKVVerb, Key,
      ...(Value ? { Value } : {}), ...(Flags !== undefined ? { Flags } : {}), ...(Index !== undefined ? { Index } : {}),
      ...(Session !== undefined ? { Session } : {}),
    };
    ops.push({ KV: kv });
  }
  if (unknown.length) return txnResponse(c, { Results: null, Errors: unknown });
  return { ops, writes };
}

export function mountTxn(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/txn", async (c) => {
    let bytes: Uint8Array;
    try {
      bytes = await readBodyBytes(c, TXN_MAX_REQUEST_BYTES, { doc: MAX_LEN_DOC });
    } catch (err) {
      return errorResponse(c, err);
    }
    const decoded = opsOf(c, new TextDecoder().decode(bytes));
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
