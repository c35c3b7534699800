/**
 * The "Figure 8" nemesis of the whole-cluster simulation, after the Figure8 and Figure8Unreliable
 * tests of MIT 6.824's Raft lab: propose on the leader, crash it after a short random delay, and
 * whenever fewer than a quorum of a five-server cluster are up, restart a random crashed server.
 *
 * Leaders then keep dying a few milliseconds into their term, before their first entries reach
 * everyone, and the next leader is elected from whichever servers happen to be up: new leaders
 * often inherit entries of earlier terms past their commit index, and now and then a server comes
 * back holding an entry that a majority lacks, wins, and replicates it to a majority before its own
 * entry — the situation of the Raft paper's Figure 8 (§5.4.2), in which committing that entry by
 * counting replicas is unsafe.
 */
import type { Rng } from "../../src/platform/index.ts";
import type { SimClock } from "../harness/sim_clock.ts";

/** What the nemesis needs of the simulation. */
export interface Figure8Nemesis<S extends { readonly up: boolean }> {
  readonly clock: SimClock;
  readonly rng: Rng;
  /** Every server of the cluster, up or not. */
  servers(): readonly S[];
  /** Whether `s` (which is up) currently believes it leads. */
  isLeader(s: S): boolean;
  /** Proposes a fresh command on `s` without waiting for its outcome. */
  propose(s: S): void;
  crash(s: S): Promise<void>;
  restart(s: S): Promise<void>;
  /** Milliseconds before a follower campaigns (the base election timeout). */
  readonly electionMs: number;
}

/** Runs the nemesis until `untilMs` on the simulated clock. */
export async function runFigure8Nemesis<S extends { readonly up: boolean }>(n: Figure8Nemesis<S>, untilMs: number): Promise<void> {
  const { clock, rng } = n;
  const quorum = Math.floor(n.servers().length / 2) + 1;
  while (clock.monotonic() < untilMs) {
    const leader = n.servers().find((s) => s.up && n.isLeader(s));
    if (leader) n.propose(leader);
    // Mostly a few milliseconds (a leader dies before its entries reach everyone), sometimes up to
    // half an election timeout (it gets some entries out first).
    const pause = rng.next() < 0.1 ? 1 + rng.int(n.electionMs / 2) : 1 + rng.int(13);
    await sleep(clock, pause);
    // Half the time, as in Figure8Unreliable (RaftElectionTimeout/2 per mille): some leaders live on.
    if (leader?.up && n.isLeader(leader) && rng.next() < 0.5) await n.crash(leader);
    const up = n.servers().filter((s) => s.up).length;
    if (up < quorum) {
      const all = n.servers();
      const s = all[rng.int(all.length)]!;
      if (!s.up) await n.restart(s);
    }
  }
}

function sleep(clock: SimClock, ms: number): Promise<void> {
  return new Promise((r) => clock.setTimer(ms, r));
}
