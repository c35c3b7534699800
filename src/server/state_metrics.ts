/**
 * Timings of the writes a server proposes, by command, with the names of the Consul RPC endpoints that
 * time them (`kvs.apply` for a KV write, `txn.apply`, `catalog.register`...): from the moment the server
 * takes the command to its result, so the Raft commit and the apply are included, as in Consul. The
 * leader's own duties are timed under the same names, except tombstone reaping (`leader.reapTombstones`).
 */
import type { StateCommand } from "../state/index.ts";
import { MetricsRegistry, type SampleHandle } from "../telemetry/index.ts";

const COMMAND_METRICS: Readonly<Partial<Record<StateCommand["type"], string>>> = {
  kv: "kvs.apply",
  txn: "txn.apply",
  register: "catalog.register",
  deregister: "catalog.deregister",
  session: "session.apply",
  "prepared-query": "prepared-query.apply",
  intention: "intention.apply",
  "config-entry": "config_entry.apply",
  "federation-state": "federation_state.apply",
  ca: "connect.ca.apply",
  autopilot: "autopilot.apply",
  restore: "snapshot.restore",
  "tombstone-reap": "leader.reapTombstones",
};

/** The sample a command's write time goes to, or undefined for commands that are not timed (coordinate batches). */
export type CommandTimings = (type: StateCommand["type"]) => SampleHandle | undefined;

export function commandTimings(registry: MetricsRegistry | undefined): CommandTimings {
  const handles = new Map<string, SampleHandle>();
  if (registry) for (const [type, name] of Object.entries(COMMAND_METRICS)) handles.set(type, registry.sample(name!));
  return (type) => handles.get(type);
}
