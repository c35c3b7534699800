/**
 * Leadership transfer as an operator asks for it (Consul 1.15's Operator.TransferLeader, over
 * hashicorp/raft's LeadershipTransfer / LeadershipTransferToServer): on the leader, pick or check the
 * transferee, start the transfer on the consensus node (which only enqueues it), then wait until
 * another server is known as leader or a bound passes.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { Clock } from "../platform/index.ts";
import { AbortError } from "./abort.ts";
import type { RaftView } from "./forward.ts";

/** What the transfer needs of the local server besides its RaftView. */
export interface LeadershipTransferDeps {
  /**
   * The local consensus node: `transferLeadership` enqueues a transfer (Raft thesis §3.10: the leader
   * catches the transferee up, then tells it to campaign at once); `progress` is, on the leader, how far
   * each server's log is known to match.
   */
  readonly node: {
    transferLeadership(to: string): void;
    progress(id: string): { readonly match: number } | undefined;
  };
  readonly clock: Clock;
  /**
   * How long to wait for a new leader before answering that the transfer timed out; default
   * DEFAULT_TRANSFER_TIMEOUT_MS. Raft itself gives up a transfer after one election timeout, so a few
   * election timeouts is enough.
   */
  readonly timeoutMs?: number;
}

/** Five election timeouts of a production server (tick 100 ms, 10 ticks). */
export const DEFAULT_TRANSFER_TIMEOUT_MS = 5_000;

/** How often the wait looks at the Raft status again. */
const POLL_MS = 20;

/**
 * The transferee: `requested` when given, after checking it is a voter other than this leader; else
 * the other voter with the highest match index (hashicorp/raft's pickServer picks the highest next
 * index), ties broken by ID. Throws ConnectErrors with Consul's texts where Consul has one:
 * NotFound "Could not find address for server id X" (Consul's ServerLookup), InvalidArgument for
 * this server ("cannot transfer leadership to itself") or a non-voter, FailedPrecondition
 * "cannot find peer" when there is no other voter.
 */
export function pickTransferee(raft: RaftView, node: LeadershipTransferDeps["node"], requested: string): string {
  const s = raft.status();
  const { voters, learners } = s.config;
  if (requested) {
    if (requested === s.id) throw new ConnectError("cannot transfer leadership to itself", Code.InvalidArgument);
    if (learners.includes(requested)) {
      throw new ConnectError(`server id ${requested} is not a voter: leadership can only be transferred to a voter`, Code.InvalidArgument);
    }
    if (!voters.includes(requested)) throw new ConnectError(`Could not find address for server id ${requested}`, Code.NotFound);
    return requested;
  }
  const best = voters
    .filter((id) => id !== s.id)
    .map((id) => ({ id, match: node.progress(id)?.match ?? 0 }))
    .sort((a, b) => b.match - a.match || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
  if (!best) throw new ConnectError("cannot find peer", Code.FailedPrecondition);
  return best.id;
}

/**
 * Transfers leadership from this server (the leader) to `requested`, or to the most caught-up other
 * voter when it is "", and resolves with the new leader's ID once this server knows another leader.
 * Rejects (besides pickTransferee's refusals) with Aborted "leadership transfer timeout ..." when no
 * new leader is known within the bound, Aborted when leadership went to another server than the one
 * asked for, and AbortError when `signal` aborts. The transfer itself is not undone by giving up:
 * Raft aborts it after an election timeout.
 */
export async function transferLeadership(raft: RaftView, deps: LeadershipTransferDeps, requested: string, signal?: AbortSignal): Promise<string> {
  const self = raft.status().id;
  const target = pickTransferee(raft, deps.node, requested);
  deps.node.transferLeadership(target);
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TRANSFER_TIMEOUT_MS;
  const deadline = deps.clock.monotonic() + timeoutMs;
  for (;;) {
    const s = raft.status();
    if (s.role !== "Leader" && s.leader !== "" && s.leader !== self) {
      if (requested && s.leader !== requested) {
        throw new ConnectError(`leadership moved to server id ${s.leader}, not to the requested ${requested}`, Code.Aborted);
      }
      return s.leader;
    }
    if (signal?.aborted) throw new AbortError();
    if (deps.clock.monotonic() >= deadline) {
      throw new ConnectError(`leadership transfer timeout: no new leader within ${timeoutMs} ms (transferee ${target})`, Code.Aborted);
    }
    await new Promise<void>((resolve) => deps.clock.setTimer(POLL_MS, resolve));
  }
}
