/**
 * The gateway's configuration store: the XdsSink the xDS client delivers Listener, Cluster and
 * ClusterLoadAssignment sets to, and the source of the GatewayConfig the proxy runs on.
 *
 * Each set is validated as a whole (./xds_decode_listener.ts, ./xds_decode_cluster.ts,
 * ./xds_decode_endpoints.ts): one bad resource NACKs the set and leaves the previous configuration
 * untouched. Load assignments are kept by name whether or not their cluster is known yet, and an EDS
 * cluster takes the assignment of its name whenever both are present (Envoy warms a cluster until its
 * EDS arrives; here it simply has no endpoints until then). Assignments survive a cluster update, so
 * a changed Cluster keeps its endpoints without waiting for EDS to be resent.
 *
 * Unchanged resources keep their decoded objects: a ListenerConfig or ClusterConfig is the same
 * object across applies until its resource (or, for EDS, its assignment) changes, so the proxy can diff
 * configurations by identity. Listeners are notified only when something changed.
 */
import type { Any } from "@bufbuild/protobuf/wkt";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { ClusterConfig, EndpointConfig, GatewayConfig, ListenerConfig } from "./config_types.ts";
import { decodeCluster } from "./xds_decode_cluster.ts";
import { decodeAssignment } from "./xds_decode_endpoints.ts";
import { decodeListener } from "./xds_decode_listener.ts";
import { GATEWAY_TYPE_URLS, type XdsSink } from "./xds_sink.ts";
import { Nack, unpack } from "./xds_strict.ts";

export interface GatewayConfigStore extends XdsSink {
  /** The configuration built from the last accepted sets (empty maps before any). */
  current(): GatewayConfig;
  /**
   * Calls `fn` with the new configuration after each accepted apply that changed it. `fn` must not
   * throw. Returns the unsubscribe function.
   */
  onChange(fn: (config: GatewayConfig) => void): () => void;
  /** The accepted resources of one type URL (name -> Any, sorted by name), for /config_dump. */
  resources(typeUrl: string): ReadonlyMap<string, Any>;
}

interface Entry<T> {
  readonly raw: Any;
  readonly value: T;
}

interface Merged {
  readonly base: ClusterConfig;
  readonly endpoints: readonly EndpointConfig[];
  readonly out: ClusterConfig;
}

const NO_ENDPOINTS: readonly EndpointConfig[] = Object.freeze([]);

function decodeLoadAssignment(any: Any, name: string): readonly EndpointConfig[] {
  const path = `ClusterLoadAssignment ${name}`;
  const cla = unpack(any, ClusterLoadAssignmentSchema, path);
  if (cla.clusterName !== name) throw new Nack(`${path}: resource is named ${JSON.stringify(cla.clusterName)}`);
  return decodeAssignment(cla, path, { requireIp: true });
}

function sameAny(a: Any, b: Any): boolean {
  if (a.typeUrl !== b.typeUrl || a.value.length !== b.value.length) return false;
  for (let i = 0; i < a.value.length; i++) if (a.value[i] !== b.value[i]) return false;
  return true;
}

function sameEntries<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** Envoy refuses two listeners on one address ("has duplicate address ... as existing listener"). */
function duplicateAddresses(listeners: ReadonlyMap<string, Entry<ListenerConfig>>): string[] {
  const owners = new Map<string, string>();
  const errors: string[] = [];
  for (const [name, { value }] of listeners) {
    const addr = value.address.includes(":") ? `[${value.address}]:${value.port}` : `${value.address}:${value.port}`;
    const prior = owners.get(addr);
    if (prior !== undefined && value.port !== 0) errors.push(`Listener ${name}: has duplicate address '${addr}' as existing listener ${prior}`);
    else owners.set(addr, name);
  }
  return errors;
}

/** A fresh, empty store. */
export function createGatewayConfigStore(): GatewayConfigStore {
  let listeners = new Map<string, Entry<ListenerConfig>>();
  let clusters = new Map<string, Entry<ClusterConfig>>();
  let assignments = new Map<string, Entry<readonly EndpointConfig[]>>();
  let merged = new Map<string, Merged>();
  let config: GatewayConfig = { listeners: new Map(), clusters: new Map() };
  const subscribers = new Set<(config: GatewayConfig) => void>();

  const rebuild = () => {
    const nextClusters = new Map<string, ClusterConfig>();
    const nextMerged = new Map<string, Merged>();
    for (const [name, { value: base }] of clusters) {
      if (base.type !== "EDS") {
        nextClusters.set(name, base);
        continue;
      }
      const endpoints = assignments.get(name)?.value ?? NO_ENDPOINTS;
      const prior = merged.get(name);
      const m = prior && prior.base === base && prior.endpoints === endpoints ? prior : { base, endpoints, out: { ...base, endpoints } };
      nextMerged.set(name, m);
      nextClusters.set(name, m.out);
    }
    merged = nextMerged;
    const nextListeners = new Map([...listeners].map(([name, e]) => [name, e.value]));
    if (sameEntries(config.listeners, nextListeners) && sameEntries(config.clusters, nextClusters)) return;
    config = { listeners: nextListeners, clusters: nextClusters };
    for (const fn of subscribers) fn(config);
  };

  /** Decodes a whole set, reusing the entries whose bytes did not change; returns errors or the new map. */
  const decodeSet = <T>(prev: ReadonlyMap<string, Entry<T>>, resources: ReadonlyMap<string, Any>, decode: (any: Any, name: string) => T) => {
    const next = new Map<string, Entry<T>>();
    const errors: string[] = [];
    for (const name of [...resources.keys()].sort()) {
      const raw = resources.get(name)!;
      const old = prev.get(name);
      if (old && sameAny(old.raw, raw)) {
        next.set(name, old);
        continue;
      }
      try {
        next.set(name, { raw, value: decode(raw, name) });
      } catch (err) {
        errors.push(err instanceof Nack ? err.message : `${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return { next, errors };
  };

  const apply = (typeUrl: string, resources: ReadonlyMap<string, Any>): string | undefined => {
    if (typeUrl === GATEWAY_TYPE_URLS.listener) {
      const { next, errors } = decodeSet(listeners, resources, decodeListener);
      errors.push(...duplicateAddresses(next));
      if (errors.length > 0) return errors.join("\n");
      listeners = next;
    } else if (typeUrl === GATEWAY_TYPE_URLS.cluster) {
      const { next, errors } = decodeSet(clusters, resources, decodeCluster);
      if (errors.length > 0) return errors.join("\n");
      clusters = next;
    } else if (typeUrl === GATEWAY_TYPE_URLS.endpoint) {
      const { next, errors } = decodeSet(assignments, resources, decodeLoadAssignment);
      if (errors.length > 0) return errors.join("\n");
      assignments = next;
    } else {
      return `resource type ${typeUrl} is not supported by the built-in gateway`;
    }
    rebuild();
    return undefined;
  };

  const entriesOf = (typeUrl: string): ReadonlyMap<string, Entry<unknown>> | undefined =>
    typeUrl === GATEWAY_TYPE_URLS.listener ? listeners : typeUrl === GATEWAY_TYPE_URLS.cluster ? clusters : typeUrl === GATEWAY_TYPE_URLS.endpoint ? assignments : undefined;

  return {
    apply,
    endpointNames: () => [...clusters.values()].filter((e) => e.value.type === "EDS").map((e) => e.value.name).sort(),
    current: () => config,
    onChange(fn) {
      subscribers.add(fn);
      return () => void subscribers.delete(fn);
    },
    resources(typeUrl) {
      return new Map([...(entriesOf(typeUrl) ?? new Map<string, Entry<unknown>>())].map(([name, e]) => [name, e.raw]));
    },
  };
}
