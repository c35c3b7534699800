/**
 * The nemesis's fault schedule, drawn from a seed (pure: the same seed and shape give the same plan).
 * Time is split into rounds: a fault starts at the beginning of a round and is healed before the next
 * one starts, after a quiet gap, so every fault meets a cluster that had a chance to recover, as in
 * Jepsen's start/stop nemesis cycles.
 */
import type { Rng } from "../../src/platform/index.ts";

/** One fault. `nodes` are server indexes; "leader" faults pick the leader when they start. */
export type Fault =
  /** The nodes of each group talk only within their group (every node is in exactly one group). */
  | { readonly kind: "partition"; readonly groups: readonly (readonly number[])[]; readonly shape: "isolate" | "halves" | "bridge" }
  /** The current leader cut off from every other server. */
  | { readonly kind: "isolate-leader" }
  /** `to` no longer hears from `from` (one direction only); `from` still hears `to`. */
  | { readonly kind: "one-way"; readonly from: number; readonly to: number }
  /** SIGKILL, restarted when the fault heals. */
  | { readonly kind: "kill"; readonly nodes: readonly number[] }
  /** SIGSTOP, SIGCONT when the fault heals (longer than an election timeout). */
  | { readonly kind: "pause"; readonly nodes: readonly number[] }
  | { readonly kind: "pause-leader" }
  /** The nodes' disks fill up (their Raft log writes fail with ENOSPC); emptied when the fault heals. */
  | { readonly kind: "disk-full"; readonly nodes: readonly number[] }
  /** Leadership handed over again and again (`operator raft transfer-leader`, every 1-2 s) while it lasts. */
  | { readonly kind: "transfers" }
  /** Drops `percent`% of every packet each node sends. */
  | { readonly kind: "loss"; readonly percent: number }
  /**
   * Slow links for a minority: each one's outgoing traffic through a token bucket (tc tbf) of `kbit`
   * kbit/s, packets waiting up to 500 ms in its queue and dropped past that. The kernel here has no
   * netem, so this is how the nemesis delays packets: queueing behind a slow link, as a congested
   * WAN link does, rather than a fixed delay per packet.
   */
  | { readonly kind: "slow"; readonly nodes: readonly number[]; readonly kbit: number };

export interface PlannedFault {
  /** Milliseconds from the start of the run. */
  readonly at: number;
  /** How long it lasts before it is healed. */
  readonly forMs: number;
  readonly fault: Fault;
}

export interface PlanOptions {
  readonly servers: number;
  readonly durationMs: number;
  /** Time before the first fault and after each heal (default 3 s). */
  readonly quietMs?: number;
  /** Shortest and longest fault (default 3-8 s: longer than the election timeout). */
  readonly minFaultMs?: number;
  readonly maxFaultMs?: number;
}

const shuffle = (rng: Rng, n: number): number[] => {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};

/** A fault for a cluster of `n` servers (n >= 3); minority faults only, so a majority can always make progress. */
export function drawFault(rng: Rng, n: number): Fault {
  const minority = Math.floor((n - 1) / 2);
  const order = shuffle(rng, n);
  switch (rng.int(11)) {
    case 0:
      return { kind: "partition", shape: "isolate", groups: [[order[0]!], order.slice(1).sort()] };
    case 1: {
      const small = order.slice(0, minority).sort();
      return { kind: "partition", shape: "halves", groups: [small, order.slice(minority).sort()] };
    }
    case 2: {
      // A bridge: two sides that do not see each other, and one node that sees both (Jepsen's bridge).
      // Modelled as overlapping groups; `groups[0]` and `groups[1]` share the bridge node.
      const bridge = order[0]!;
      const rest = order.slice(1);
      const half = Math.floor(rest.length / 2);
      return { kind: "partition", shape: "bridge", groups: [[bridge, ...rest.slice(0, half)].sort(), [bridge, ...rest.slice(half)].sort()] };
    }
    case 3:
      return { kind: "isolate-leader" };
    case 4:
      return { kind: "one-way", from: order[0]!, to: order[1]! };
    case 5:
      return { kind: "kill", nodes: order.slice(0, 1 + rng.int(minority)).sort() };
    case 6:
      return rng.int(2) === 0 ? { kind: "pause", nodes: order.slice(0, 1 + rng.int(minority)).sort() } : { kind: "pause-leader" };
    case 7:
      return { kind: "disk-full", nodes: order.slice(0, 1 + rng.int(minority)).sort() };
    case 8:
      return { kind: "transfers" };
    case 9:
      return { kind: "slow", nodes: order.slice(0, 1 + rng.int(minority)).sort(), kbit: 128 << rng.int(4) };
    default:
      return { kind: "loss", percent: 5 + rng.int(16) };
  }
}

/** The whole run's schedule: rounds of quiet, fault, heal until `durationMs`. */
export function planFaults(rng: Rng, o: PlanOptions): PlannedFault[] {
  const quiet = o.quietMs ?? 3_000;
  const min = o.minFaultMs ?? 3_000;
  const max = o.maxFaultMs ?? 8_000;
  const out: PlannedFault[] = [];
  for (let at = quiet; ; ) {
    const forMs = min + rng.int(max - min + 1);
    if (at + forMs > o.durationMs) break;
    out.push({ at, forMs, fault: drawFault(rng, o.servers) });
    at += forMs + quiet;
  }
  return out;
}

/** One line for logs and reports. */
export function describeFault(f: Fault): string {
  switch (f.kind) {
    case "partition":
      return `partition ${f.shape} ${f.groups.map((g) => `[${g.join(",")}]`).join(" ")}`;
    case "isolate-leader":
      return "isolate the leader";
    case "one-way":
      return `${f.to} stops hearing ${f.from}`;
    case "kill":
      return `kill -9 [${f.nodes.join(",")}]`;
    case "pause":
      return `SIGSTOP [${f.nodes.join(",")}]`;
    case "pause-leader":
      return "SIGSTOP the leader";
    case "disk-full":
      return `disk full [${f.nodes.join(",")}]`;
    case "transfers":
      return "leader transfers";
    case "loss":
      return `${f.percent}% packet loss everywhere`;
    case "slow":
      return `links of [${f.nodes.join(",")}] slowed to ${f.kbit} kbit/s`;
  }
}
