/**
 * Equality of local and catalog records "for all functional parts" (Consul's NodeService.IsSame and
 * HealthCheck.IsSame), ignoring Raft indexes. Go's nil and empty slices/maps compare equal here, since
 * the catalog may hand back either for a value the agent registered as the other.
 */
import type { HealthCheck, NodeService } from "../model/index.ts";

type ServiceLike = Omit<NodeService, "CreateIndex" | "ModifyIndex"> & Partial<Pick<NodeService, "CreateIndex" | "ModifyIndex">>;
type CheckLike = Omit<HealthCheck, "CreateIndex" | "ModifyIndex"> & Partial<Pick<HealthCheck, "CreateIndex" | "ModifyIndex">>;

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

/** NodeService.IsSame. */
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
