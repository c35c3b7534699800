/**
 * Equality of catalog records "for all functional parts" (Consul 1.8's Node.IsSame, NodeService.IsSame
 * and HealthCheck.IsSame in agent/structs/structs.go), ignoring Raft indexes. Consul compares maps,
 * slices and nested structs with reflect.DeepEqual; here Go's nil and empty slices/maps compare equal,
 * because a record that went through JSON (the Raft log, a snapshot, an RPC) may come back with either
 * for the same value, and the callers (agent anti-entropy, federation-state anti-entropy) only use the
 * answer to skip a write that would change nothing.
 */
import type { HealthCheck, Node, NodeService } from "./catalog.ts";

type Unindexed<T> = Omit<T, "CreateIndex" | "ModifyIndex"> & Partial<Pick<NodeService, "CreateIndex" | "ModifyIndex">>;
type ServiceLike = Unindexed<NodeService>;
type CheckLike = Unindexed<HealthCheck>;
type NodeLike = Unindexed<Node>;

/** Drops Go zero values (undefined, null, "", 0, false, [], {}) recursively, then sorts keys: a canonical form for structs. */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical);
    return items.length ? items : undefined;
  }
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) {
      const c = canonical((v as Record<string, unknown>)[key]);
      if (c !== undefined) out[key] = c;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (v === null || v === "" || v === 0 || v === false) return undefined;
  return v;
}

/** Deep equality of two struct-like values modulo Go zero values. */
export function sameStruct(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Equality of string lists (null == []); order matters, as with reflect.DeepEqual. */
export function sameList(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): boolean {
  const x = a ?? [], y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** Equality of maps (null == {}); entries with "" values count. */
export function sameMap(a: Readonly<Record<string, unknown>> | null | undefined, b: Readonly<Record<string, unknown>> | null | undefined): boolean {
  const x = a ?? {}, y = b ?? {};
  const kx = Object.keys(x), ky = Object.keys(y);
  return kx.length === ky.length && kx.every((k) => Object.hasOwn(y, k) && JSON.stringify(x[k]) === JSON.stringify(y[k]));
}

/** Node.IsSame: ID, Node, Address, Datacenter, TaggedAddresses and Meta. */
export function sameNode(a: NodeLike, b: NodeLike): boolean {
  return a.ID === b.ID &&
    a.Node === b.Node &&
    a.Address === b.Address &&
    a.Datacenter === b.Datacenter &&
    sameMap(a.TaggedAddresses, b.TaggedAddresses) &&
    sameMap(a.Meta, b.Meta);
}

/** NodeService.IsSame (absent Weights are Consul's default {1, 1}; an absent Kind is ""). */
export function sameService(a: ServiceLike, b: ServiceLike): boolean {
  return a.ID === b.ID &&
    a.Service === b.Service &&
    sameList(a.Tags, b.Tags) &&
    a.Address === b.Address &&
    a.Port === b.Port &&
    sameMap(a.TaggedAddresses, b.TaggedAddresses) &&
    sameStruct(a.Weights ?? { Passing: 1, Warning: 1 }, b.Weights ?? { Passing: 1, Warning: 1 }) &&
    sameMap(a.Meta, b.Meta) &&
    a.EnableTagOverride === b.EnableTagOverride &&
    (a.Kind ?? "") === (b.Kind ?? "") &&
    sameStruct(a.Proxy, b.Proxy) &&
    sameStruct(a.Connect, b.Connect);
}

/** HealthCheck.IsSame. */
export function sameCheck(a: CheckLike, b: CheckLike): boolean {
  return a.Node === b.Node &&
    a.CheckID === b.CheckID &&
    a.Name === b.Name &&
    a.Status === b.Status &&
    a.Notes === b.Notes &&
    a.Output === b.Output &&
    a.ServiceID === b.ServiceID &&
    a.ServiceName === b.ServiceName &&
    sameList(a.ServiceTags, b.ServiceTags) &&
    (a.Type ?? "") === (b.Type ?? "") &&
    sameStruct(a.Definition, b.Definition);
}
