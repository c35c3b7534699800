/**
 * Snapshots between servers. A leader's core sends a MsgSnap to a follower it cannot catch up from its
 * log: `send` streams the log's snapshot file it names over the transport (read without blocking the
 * loop) and reports the outcome to the core. On the follower the transport hands over the complete
 * bytes (`received`) before the MsgSnap is stepped, and when the core asks for it in a Ready, `install`
 * makes the snapshot durable and restores the state machine from it.
 */
import type { ConfState, Message, Snapshot } from "../raft/index.ts";
import type { Logger } from "../platform/index.ts";
import type { Transport } from "./ports.ts";
import type { Replica } from "./replica.ts";
import type { SnapshotTaker } from "./snapshot_taker.ts";

type MsgSnap = Message & { type: "MsgSnap" };

export interface SnapshotTransferOptions {
  readonly logger: Logger;
  readonly transport: Transport;
  /** Hands the core the outcome of streaming a snapshot to `to` (reportSnapshot), as a loop event. */
  readonly report: (to: string, ok: boolean) => void;
  /** True once the node stopped: a snapshot saved then is not applied. */
  readonly stopped: () => boolean;
}

/** Whether a snapshot whose configuration is `cs` can be installed by `id`: a Raft core restores only a snapshot that names it. */
export function snapshotNames(cs: ConfState, id: string): boolean {
  return [...cs.voters, ...cs.learners, ...cs.votersOutgoing].includes(id);
}

export class SnapshotTransfer {
  /** Snapshot bytes received from a leader, by index, until the core asks to install them. */
  private readonly pending = new Map<number, Uint8Array>();

  constructor(
    private readonly replica: Replica,
    private readonly snapshots: Pick<SnapshotTaker, "inFlight" | "wantFresh">,
    private readonly o: SnapshotTransferOptions,
  ) {}

  /**
   * Leader side, in the loop's turn: sends the snapshot `m` names. Reports failure (so the core tries
   * again later) when it is no longer the log's latest, or when it does not name the follower: then a
   * fresh one is wanted, which includes the membership change that added it.
   */
  send(m: MsgSnap): void {
    const { logger, transport, report } = this.o;
    logger.debug("streaming snapshot", { to: m.to, index: m.snapshot.index });
    if (!snapshotNames(m.snapshot.confState, m.to)) {
      this.snapshots.wantFresh();
      report(m.to, false);
      return;
    }
    const failed = () => report(m.to, false);
    this.replica.log.readSnapshot().then((snap) => {
      // A newer snapshot may have replaced it meanwhile: the core asks again with that one.
      if (!snap || snap.meta.index !== m.snapshot.index) return failed();
      return transport.sendSnapshot(m.to, m, snap.data).then((ok) => report(m.to, ok));
    }).catch((err) => {
      logger.error("could not stream a snapshot to a follower", { to: m.to, index: m.snapshot.index, error: err });
      failed();
    });
  }

  /** Follower side: keeps the complete bytes of the snapshot `msg` carries until the core asks to install it. */
  received(msg: MsgSnap, data: Uint8Array): void {
    this.o.logger.debug("received snapshot", { from: msg.from, index: msg.snapshot.index, bytes: data.length });
    this.pending.set(msg.snapshot.index, data);
  }

  /**
   * In the loop's turn, for a Ready's snapshot: once any snapshot being taken here has settled (one file
   * written at a time; the one taken here is dropped when its outcome comes), saves the received bytes
   * durably and makes them the replica's state. Throws when they were never received. Received
   * snapshots up to `meta`'s index are forgotten.
   */
  async install(meta: Snapshot): Promise<void> {
    if (this.snapshots.inFlight) await this.snapshots.inFlight;
    const data = this.pending.get(meta.index);
    if (!data) throw new Error(`core asked to install snapshot ${meta.index} whose bytes were never received`);
    for (const k of [...this.pending.keys()]) if (k <= meta.index) this.pending.delete(k);
    await this.replica.log.saveSnapshot(meta, data);
    if (this.o.stopped()) return;
    this.replica.adopt(meta, data);
    this.o.logger.info("installed snapshot from leader", { index: meta.index, term: meta.term, bytes: data.length });
  }

  /** Forgets every received snapshot (the log failed: the core that asked for them is gone). */
  clear(): void {
    this.pending.clear();
  }
}
