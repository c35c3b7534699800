/**
 * How much the state holds, for the usage gauges (Consul 1.9+'s `state.*`): counted from the tables'
 * sizes and the per-name service index, so a read costs O(service names), never O(keys). Not a
 * blocking query: it registers no watch.
 */
import type { CARoot } from "../model/index.ts";
import type { StateStore } from "./store.ts";

export interface StateUsage {
  readonly nodes: number;
  /** Distinct service names. */
  readonly services: number;
  readonly serviceInstances: number;
  readonly kvEntries: number;
  readonly sessions: number;
  readonly intentions: number;
  readonly configEntries: number;
  /** The active CA root, if any. */
  readonly activeRoot: CARoot | undefined;
}

export function stateUsage(store: StateStore): StateUsage {
  const db = store.db;
  let instances = 0;
  for (const s of db.serviceTags.values()) instances += s.instances;
  let activeRoot: CARoot | undefined;
  for (const r of db.caRoots.values()) if (r.Active) activeRoot = r;
  return {
    nodes: db.nodes.size, services: db.serviceTags.size, serviceInstances: instances, kvEntries: db.kvs.size, sessions: db.sessions.size,
    intentions: db.intentions.size, configEntries: db.configEntries.size, activeRoot,
  };
}
