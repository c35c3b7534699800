/**
 * Membership changes a server can make safely from the leader.
 */
import type { Clock } from "../platform/index.ts";
import type { ConfState } from "../raft/index.ts";
import type { ConsensusNode } from "./node_types.ts";

export interface AddServerOptions {
  readonly clock: Clock;
  /** How often to look at the learner's progress. Default 50 ms. */
  readonly pollMs?: number;
  /** Give up (leaving the server a learner) if it has not caught up by then. Default 30 s. */
  readonly catchUpTimeoutMs?: number;
}

/**
 * Adds `id` as a non-voting learner, waits until its log has caught up with the leader's commit index,
 * then promotes it to voter (Raft thesis §4.2.1: a new server that votes before it has the log can
 * stall commits). Must be called on the leader; rejects if leadership is lost, a change fails, or the
 * server does not catch up in time. Resolves with the configuration after the promotion.
 */
export async function addServerSafely<R>(node: ConsensusNode<R>, id: string, options: AddServerOptions): Promise<ConfState> {
  const { clock } = options;
  const pollMs = options.pollMs ?? 50;
  const timeoutMs = options.catchUpTimeoutMs ?? 30_000;
  await node.changeMembership({ transition: "Auto", changes: [{ type: "AddLearnerNode", nodeId: id }] });
  const deadline = clock.monotonic() + timeoutMs;
  for (;;) {
    const status = node.status();
    if (status.role !== "Leader") throw new Error(`lost leadership while adding ${id}; it stays a learner`);
    const p = node.progress(id);
    if (p && p.match >= status.commit) break;
    if (clock.monotonic() >= deadline) throw new Error(`server ${id} did not catch up within ${timeoutMs} ms; it stays a learner`);
    await new Promise<void>((resolve) => clock.setTimer(pollMs, resolve));
  }
  return node.changeMembership({ transition: "Auto", changes: [{ type: "AddNode", nodeId: id }] });
}
