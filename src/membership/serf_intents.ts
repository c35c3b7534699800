/**
 * Serf's leave/join intent records (hashicorp/serf serf/serf.go recentIntents, upsertIntent, reapIntents;
 * delegate.go LocalState / MergeRemoteState, the member part). Pure; Serf applies what these give it through
 * its own intent handling (handleNodeLeaveIntent / handleNodeJoinIntent).
 *
 * Why the push-pull part matters: a leave intent and the core's leave message are gossiped a limited number
 * of times, so a member can miss both; its own failure detection then reports the leaver "failed", and
 * memberlist's push-pull does not turn dead into left. serf repairs that with the member clock, each member's
 * status Lamport time and the names of the members that left, carried in every push-pull: the receiver
 * applies a leave intent for each left member and a join intent for each other one, and the Lamport times
 * keep stale records from overriding newer intents (a member that came back refuted its old leave with a
 * newer join intent).
 */
import { SerfKind, type SerfMemberRecord, type SerfMsg } from "./codec.ts";
import { MAX_LAMPORT_TIME } from "./lamport.ts";

/** The kinds of serf message that are intents. */
type IntentKind = typeof SerfKind.LeaveIntent | typeof SerfKind.JoinIntent;

/** serf RecentIntentTimeout (default 5 minutes): how long an intent about an unknown member is kept. */
export const RECENT_INTENT_TIMEOUT_MS = 5 * 60_000;
/** Most intents about unknown members kept (the oldest recorded goes first). */
export const RECENT_INTENTS = 128;

/**
 * Intents about members not (yet) known (serf recentIntents): per node, the latest leave or join intent's
 * kind and Lamport time, applied when the member joins. Each is kept RECENT_INTENT_TIMEOUT_MS (serf
 * reapIntents), at most RECENT_INTENTS of them.
 */
export class RecentIntents {
  private readonly byNode = new Map<string, { kind: SerfKind; ltime: number; at: number }>();

  /** Intents held (expired ones until the next `prune`). */
  get size(): number {
    return this.byNode.size;
  }

  /** serf upsertIntent: records the intent unless a live one at the same or a later time is held; true when recorded (news). */
  upsert(node: string, kind: SerfKind, ltime: number, now: number): boolean {
    const prev = this.live(node, now);
    if (prev !== undefined && prev.ltime >= ltime) return false;
    this.byNode.delete(node);
    this.byNode.set(node, { kind, ltime, at: now });
    if (this.byNode.size > RECENT_INTENTS) this.byNode.delete(this.byNode.keys().next().value!);
    return true;
  }

  /** Removes and returns the live intent about `node`, if any (the member joined). */
  take(node: string, now: number): { readonly kind: SerfKind; readonly ltime: number } | undefined {
    const i = this.live(node, now);
    this.byNode.delete(node);
    return i && { kind: i.kind, ltime: i.ltime };
  }

  /** Forgets the intents older than RECENT_INTENT_TIMEOUT_MS (serf reapIntents). */
  prune(now: number): void {
    for (const [node, i] of this.byNode) if (now - i.at > RECENT_INTENT_TIMEOUT_MS) this.byNode.delete(node);
  }

  private live(node: string, now: number) {
    const i = this.byNode.get(node);
    return i !== undefined && now - i.at <= RECENT_INTENT_TIMEOUT_MS ? i : undefined;
  }
}

/** serf LocalState's member part: every known member's status time, left ones marked, in name order (deterministic bytes). */
export function memberRecords(members: Iterable<{ readonly name: string; readonly status: string; readonly statusLTime: number }>): SerfMemberRecord[] {
  return [...members].map((m) => ({ name: m.name, statusLTime: m.statusLTime, left: m.status === "left" }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * serf MergeRemoteState's member part: the intents a peer's records stand for, in serf's order. First a leave
 * intent for each left member, one past its status time (serf: the leave was accepted after that time, and a
 * peer that learned of the leave from the core alone holds only the member's earlier time); then a join intent
 * at each other member's status time. The receiver applies them as received intents, without re-broadcasting.
 */
export function memberIntents(records: readonly SerfMemberRecord[]): SerfMsg[] {
  const intent = (kind: IntentKind, r: SerfMemberRecord, ltime: number): SerfMsg => ({ kind, ltime, name: r.name, body: new Uint8Array(0) });
  return [
    // Saturating, as the clock does (lamport.ts): a time past the u32 maximum could not be encoded again.
    ...records.filter((r) => r.left).map((r) => intent(SerfKind.LeaveIntent, r, Math.min(r.statusLTime + 1, MAX_LAMPORT_TIME))),
    ...records.filter((r) => !r.left).map((r) => intent(SerfKind.JoinIntent, r, r.statusLTime)),
  ];
}
