/**
 * The xDS cache: per node (proxy), the readonly set of resources it should hold, with a SotW version
 * per type and a version per resource (see ./hash.ts). Pure and synchronous: no clock, no I/O.
 *
 * Producers (proxycfg, later) call `set(nodeId, resources)` with every resource of the node; the
 * cache serializes what is new, hashes it, and tells the node's watchers which types changed. ADS
 * streams (../service.ts) read snapshots and diff them against what each client holds.
 *
 * Determinism contract: a resource given as a protobuf-es message is serialized with `toBinary`,
 * which writes fields in field-number order and map entries in insertion order. Producers must build
 * every map field (and every repeated field whose order carries no meaning) in sorted order, so that
 * equal configuration gives equal bytes and therefore an unchanged version (DESIGN.md section 2).
 * Values are treated as immutable: passing the same object (or byte array) again, for this node or any
 * other, reuses its bytes and version.
 */
import { createRegistry, toBinary } from "@bufbuild/protobuf";
import type { Message, Registry } from "@bufbuild/protobuf";
import { ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { TYPE_URL_PREFIX } from "../types.ts";
import { resourceVersion, typeVersion } from "./hash.ts";

/** One resource as a producer gives it: a protobuf-es message, or its deterministic serialized bytes. */
export type ResourceValue = Message | Uint8Array;

/** What a producer sets for a node: type URL -> resource name -> resource. */
export type ResourceSet = ReadonlyMap<string, ReadonlyMap<string, ResourceValue>>;

/** One resource as the cache holds it. */
export interface CachedResource {
  readonly name: string;
  /** Hash of `bytes` (./hash.ts resourceVersion); the delta-xDS version of the resource. */
  readonly version: string;
  /** The serialized resource message (the `value` of its `Any`). */
  readonly bytes: Uint8Array;
}

/** All resources of one type for one node. */
export interface TypeSnapshot {
  readonly typeUrl: string;
  /** SotW `version_info`: changes exactly when the set of (name, resource version) pairs changes. */
  readonly version: string;
  /** By name, iterated in sorted name order. */
  readonly resources: ReadonlyMap<string, CachedResource>;
}

/** Everything one node should hold. A new object on every change; never mutated. */
export interface NodeSnapshot {
  readonly nodeId: string;
  /** 1 for the first snapshot of a node, +1 on every change (a removed node starts again at 1). */
  readonly generation: number;
  /** Only types with at least one resource; see {@link typeSnapshot} for the others. */
  readonly types: ReadonlyMap<string, TypeSnapshot>;
}

/** What a node's watchers are told. */
export type CacheEvent =
  | { readonly kind: "set"; readonly snapshot: NodeSnapshot; readonly changedTypes: readonly string[] }
  | { readonly kind: "removed"; readonly nodeId: string };

export type CacheWatcher = (event: CacheEvent) => void;

export interface XdsCache {
  /**
   * Replaces the node's resources. Types not in `resources` (or with an empty map) become empty.
   * Returns the type URLs whose content changed, sorted. The first `set` of a node always creates
   * its snapshot and notifies; later, when no type changed, nothing happens (no new snapshot, no
   * notification). Throws (and changes nothing) on an empty type URL or name, a message
   * whose type does not match its type URL, or a message type the registry does not know.
   * Watchers run synchronously before `set` returns; see {@link XdsCache.watch}.
   */
  set(nodeId: string, resources: ResourceSet): readonly string[];
  /**
   * Removes the node; its watchers get a "removed" event (and stay registered), also when the node never
   * had a snapshot, so a stream waiting for a proxy's first snapshot learns it will not come. Returns
   * whether the node had a snapshot.
   */
  remove(nodeId: string): boolean;
  /** The node's current snapshot, or undefined if it has none. */
  get(nodeId: string): NodeSnapshot | undefined;
  /** Node IDs with a snapshot, sorted. */
  nodes(): string[];
  /**
   * Calls `watcher` on every later change of the node (it is not called with the current snapshot:
   * read `get` after subscribing). Watchers must not throw; if one does, the others still run and
   * the first error is rethrown from `set`/`remove`. Returns the canceller.
   */
  watch(nodeId: string, watcher: CacheWatcher): () => void;
}

export interface XdsCacheOptions {
  /**
   * Finds the schema of a message value by its type name. Default: Listener, RouteConfiguration,
   * Cluster and ClusterLoadAssignment (v3). Bytes values need no schema.
   */
  readonly registry?: Registry;
}

const EMPTY_RESOURCES: ReadonlyMap<string, CachedResource> = new Map();
const EMPTY_VERSION = typeVersion([]);

/** The node's snapshot of one type; an empty one (with the version of no resources) if it has none. */
export function typeSnapshot(snapshot: NodeSnapshot | undefined, typeUrl: string): TypeSnapshot {
  return snapshot?.types.get(typeUrl) ?? { typeUrl, version: EMPTY_VERSION, resources: EMPTY_RESOURCES };
}

interface Held {
  readonly snapshot: NodeSnapshot;
  /** The value each cached resource was made from, to skip re-serializing identical objects. */
  readonly sources: ReadonlyMap<string, ReadonlyMap<string, ResourceValue>>;
}

/** Creates an empty cache. */
export function createXdsCache(options: XdsCacheOptions = {}): XdsCache {
  const registry = options.registry ??
    createRegistry(ListenerSchema, RouteConfigurationSchema, ClusterSchema, ClusterLoadAssignmentSchema);
  const held = new Map<string, Held>();
  const watchers = new Map<string, Set<CacheWatcher>>();

  // Bytes and version by value object, across nodes: producers share one message between the nodes
  // whose resource is the same (src/xds/resources memoizes by input identity), so it is serialized and
  // hashed once. Values are immutable (see the module comment), so an entry never goes stale.
  const encoded = new WeakMap<object, { readonly bytes: Uint8Array; readonly version: string }>();
  const encode = (typeUrl: string, name: string, value: ResourceValue) => {
    let e = encoded.get(value);
    if (!e) {
      const bytes = serialize(typeUrl, name, value);
      e = { bytes, version: resourceVersion(bytes) };
      encoded.set(value, e);
    } else if (!(value instanceof Uint8Array) && TYPE_URL_PREFIX + value.$typeName !== typeUrl) {
      serialize(typeUrl, name, value); // throws the type mismatch
    }
    return e;
  };

  const serialize = (typeUrl: string, name: string, value: ResourceValue): Uint8Array => {
    if (value instanceof Uint8Array) return value;
    const typeName = value.$typeName;
    if (TYPE_URL_PREFIX + typeName !== typeUrl) {
      throw new Error(`xds cache: resource ${JSON.stringify(name)} is a ${typeName}, not ${typeUrl}`);
    }
    const schema = registry.getMessage(typeName);
    if (!schema) throw new Error(`xds cache: no schema registered for ${typeName}`);
    return toBinary(schema, value);
  };

  const notify = (nodeId: string, event: CacheEvent) => {
    let first: unknown;
    for (const w of [...(watchers.get(nodeId) ?? [])]) {
      try {
        w(event);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  };

  return {
    set(nodeId, resources) {
      if (nodeId === "") throw new Error("xds cache: node ID must not be empty");
      const prev = held.get(nodeId);
      const types = new Map<string, TypeSnapshot>();
      const sources = new Map<string, ReadonlyMap<string, ResourceValue>>();
      for (const [typeUrl, byName] of resources) {
        if (!typeUrl.startsWith(TYPE_URL_PREFIX) || typeUrl.length === TYPE_URL_PREFIX.length) {
          throw new Error(`xds cache: bad type URL ${JSON.stringify(typeUrl)}`);
        }
        if (byName.size === 0) continue;
        const prevType = prev?.snapshot.types.get(typeUrl);
        const prevSources = prev?.sources.get(typeUrl);
        const cached = new Map<string, CachedResource>();
        // Whether every resource is the previous one (same name set): then so is the type's version.
        let unchanged = prevType !== undefined && prevType.resources.size === byName.size;
        for (const name of [...byName.keys()].sort()) {
          if (name === "") throw new Error(`xds cache: empty resource name in ${typeUrl}`);
          const value = byName.get(name)!;
          const old = prevType?.resources.get(name);
          if (old && prevSources?.get(name) === value) {
            cached.set(name, old);
            continue;
          }
          const { bytes, version } = encode(typeUrl, name, value);
          if (old && old.version === version) cached.set(name, old);
          else {
            cached.set(name, { name, version, bytes });
            unchanged = false;
          }
        }
        if (unchanged) {
          types.set(typeUrl, prevType!);
        } else {
          const version = typeVersion([...cached.values()].map((r) => [r.name, r.version] as const));
          types.set(typeUrl, prevType && prevType.version === version ? prevType : { typeUrl, version, resources: cached });
        }
        sources.set(typeUrl, byName);
      }
      const changed = new Set<string>();
      for (const [t, ts] of types) if (prev?.snapshot.types.get(t)?.version !== ts.version) changed.add(t);
      for (const t of prev?.snapshot.types.keys() ?? []) if (!types.has(t)) changed.add(t);
      if (prev && changed.size === 0) {
        held.set(nodeId, { snapshot: prev.snapshot, sources });
        return [];
      }
      const snapshot: NodeSnapshot = { nodeId, generation: (prev?.snapshot.generation ?? 0) + 1, types };
      held.set(nodeId, { snapshot, sources });
      const changedTypes = [...changed].sort();
      notify(nodeId, { kind: "set", snapshot, changedTypes });
      return changedTypes;
    },
    remove(nodeId) {
      const had = held.delete(nodeId);
      notify(nodeId, { kind: "removed", nodeId });
      return had;
    },
    get: (nodeId) => held.get(nodeId)?.snapshot,
    nodes: () => [...held.keys()].sort(),
    watch(nodeId, watcher) {
      let set = watchers.get(nodeId);
      if (!set) watchers.set(nodeId, (set = new Set()));
      set.add(watcher);
      return () => {
        const s = watchers.get(nodeId);
        if (!s) return;
        s.delete(watcher);
        if (s.size === 0) watchers.delete(nodeId);
      };
    },
  };
}
