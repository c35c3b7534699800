/**
 * Builds the records the store keeps from request values: defaults filled in, fields in Consul's JSON
 * order, empty optional fields left out the way Consul's `omitempty` does. Comparisons (Consul's
 * IsSame checks) run on these normalised records, so an absent field and its default compare equal.
 */
import type {
  ConnectProxyConfig,
  HealthCheck,
  HealthStatus,
  Node,
  NodeService,
  RegisterRequest,
  Session,
  Unindexed,
  Weights,
} from "../model/index.ts";
import type { SessionCreate } from "./commands.ts";

const DEFAULT_WEIGHTS: Weights = { Passing: 1, Warning: 1 };

/** The node part of a registration (Consul builds the same from RegisterRequest). */
export function nodeFromRequest(req: RegisterRequest): Unindexed<Node> {
  return {
    ID: req.ID ?? "",
    Node: req.Node,
    Address: req.Address ?? "",
    Datacenter: req.Datacenter ?? "",
    TaggedAddresses: req.TaggedAddresses ?? {},
    Meta: req.NodeMeta ?? {},
  };
}

/** Weights as Consul stores them: the given ones if valid (Passing >= 1, Warning >= 0), else {1, 1}. */
function weights(w: Weights | undefined): Weights {
  if (!w || !(w.Passing >= 1) || !(w.Warning >= 0)) return DEFAULT_WEIGHTS;
  return { Passing: w.Passing, Warning: w.Warning };
}

function proxy(p: Partial<ConnectProxyConfig> | undefined): ConnectProxyConfig {
  return { ...p, MeshGateway: p?.MeshGateway ?? {}, Expose: p?.Expose ?? {} };
}

/** A service as stored, without Raft indexes. `ID` defaults to the service name, as the endpoint does. */
export function serviceFromRequest(s: Partial<Unindexed<NodeService>>): Unindexed<NodeService> {
  const out: { -readonly [K in keyof Unindexed<NodeService>]: Unindexed<NodeService>[K] } = {
    ID: s.ID || s.Service || "",
    Service: s.Service ?? "",
    Tags: s.Tags ?? null,
    Address: s.Address ?? "",
    Meta: s.Meta ?? null,
    Port: s.Port ?? 0,
    Weights: weights(s.Weights),
    EnableTagOverride: s.EnableTagOverride ?? false,
    Proxy: proxy(s.Proxy),
    Connect: s.Connect ?? {},
  };
  const ordered: Record<string, unknown> = {};
  if (s.Kind) ordered.Kind = s.Kind;
  for (const [k, v] of Object.entries(out)) {
    ordered[k] = v;
    if (k === "Address" && s.TaggedAddresses && Object.keys(s.TaggedAddresses).length > 0) ordered.TaggedAddresses = s.TaggedAddresses;
  }
  return ordered as unknown as Unindexed<NodeService>;
}

/** A check as given, defaults filled in; Status "" becomes "critical" (Consul's ensureCheckTxn). */
export function checkFromRequest(c: Partial<Unindexed<HealthCheck>>, node: string): Unindexed<HealthCheck> {
  return {
    Node: c.Node || node,
    CheckID: c.CheckID || c.Name || "",
    Name: c.Name ?? "",
    Status: (c.Status || "critical") as HealthStatus,
    Notes: c.Notes ?? "",
    Output: c.Output ?? "",
    ServiceID: c.ServiceID ?? "",
    ServiceName: c.ServiceName ?? "",
    ServiceTags: c.ServiceTags ?? null,
    Type: c.Type ?? "",
    Definition: c.Definition ?? {},
  };
}

/** A session as stored; Behavior "" becomes "release" (Consul's sessionCreateTxn). */
export function sessionFromRequest(s: SessionCreate, idx: number): Session {
  return {
    ID: s.ID,
    Name: s.Name ?? "",
    Node: s.Node,
    LockDelay: s.LockDelay ?? 0,
    Behavior: s.Behavior || "release",
    TTL: s.TTL ?? "",
    NodeChecks: s.NodeChecks ?? [],
    ServiceChecks: s.ServiceChecks ?? null,
    CreateIndex: idx,
    ModifyIndex: idx,
  };
}

/** Adds Raft indexes at the end, where Consul's JSON has them. */
export function withIndexes<T extends object>(v: T, createIndex: number, modifyIndex: number): T & { CreateIndex: number; ModifyIndex: number } {
  return { ...v, CreateIndex: createIndex, ModifyIndex: modifyIndex };
}

/** Structural equality of JSON-like values (Go's reflect.DeepEqual on normalised records); ignores undefined fields. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && bytesEqual(a, b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!Object.hasOwn(bo, k) || !deepEqual(ao[k], bo[k])) return false;
  return true;
}

/** Byte equality where null and empty are equal (Go's bytes.Equal). */
export function bytesEqual(a: Uint8Array | null | undefined, b: Uint8Array | null | undefined): boolean {
  const n = a?.length ?? 0;
  if (n !== (b?.length ?? 0)) return false;
  for (let i = 0; i < n; i++) if (a![i] !== b![i]) return false;
  return true;
}
