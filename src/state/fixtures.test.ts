/** Shared helpers for the state store tests (no tests here). */
import type { HealthCheck, NodeService, RegisterRequest, Unindexed } from "../model/index.ts";
import { simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import type { StateCommand, StateResult } from "./commands.ts";
import { createStateStore, type StateStore } from "./store.ts";
import { WatchSet } from "./watch.ts";

export interface Harness {
  readonly clock: SimClock;
  readonly store: StateStore;
  /** Applies at the next Raft index (last + 1). */
  apply(cmd: StateCommand): StateResult;
  /** The Raft index the last apply used. */
  readonly idx: number;
}

export function harness(opts: { onTombstone?: (i: number) => void } = {}): Harness {
  const clock = simClock();
  const store = createStateStore({ clock, onTombstone: opts.onTombstone });
  let idx = 0;
  return {
    clock,
    store,
    apply(cmd) {
      idx++;
      return store.apply(idx, cmd);
    },
    get idx() {
      return idx;
    },
  };
}

export const ws = () => new WatchSet();
export const utf8 = (s: string) => new TextEncoder().encode(s);
export const text = (b: Uint8Array | null | undefined) => (b ? new TextDecoder().decode(b) : b);

export function register(node: string, more: Partial<RegisterRequest> = {}): StateCommand {
  return { type: "register", req: { Node: node, Address: "10.0.0.1", ...more } };
}

export function service(id: string, name = id, more: Partial<Unindexed<NodeService>> = {}): Unindexed<NodeService> {
  return { ...({ ID: id, Service: name } as Unindexed<NodeService>), ...more };
}

export function check(id: string, status: HealthCheck["Status"], more: Partial<Unindexed<HealthCheck>> = {}): Unindexed<HealthCheck> {
  return { ...({ CheckID: id, Name: id, Status: status } as Unindexed<HealthCheck>), ...more };
}

export const ok: StateResult = { type: "ok" };
