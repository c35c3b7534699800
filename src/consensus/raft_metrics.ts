/**
 * The consensus node's metrics, with hashicorp/raft's names as Consul reports them:
 * - `raft.apply` (counter): entries with a command appended by the leader (its own and followers' proposals);
 * - `raft.commitTime` (ms): on the leader, from the append of a batch of entries to its commit;
 * - `raft.fsm.apply` (ms): applying one committed command to the state machine;
 * - `raft.commitNumLogs`: committed entries handed to the state machine per batch;
 * - `raft.leader.dispatchLog` (ms) and `raft.leader.dispatchNumLogs`: the leader's log write and fsync
 *   per batch and the entries in it (the group commit size); `raft.rpc.appendEntries.storeLogs` (ms):
 *   the same on a follower;
 * - `raft.logstore.sync` (ms, Causeway's): the log's fsync alone, on any server;
 * - `raft.leader.lastContact` (ms): on the leader, each tick, the time since each peer was last heard;
 * - `raft.state.leader`, `raft.state.follower`, `raft.state.candidate` (counters): entries into each role;
 * - `raft.snapshot.takeSnapshot` (ms, capture to recorded), `raft.snapshot.persist` (ms, the file write);
 * - `raft.last_index` and `raft.applied_index` (gauges, as Consul 1.9+), set each tick;
 * - `server.isLeader` (gauge, 1 or 0), set on every role change.
 * Handles are made once; recording allocates nothing.
 */
import { MetricsRegistry, type CounterHandle, type GaugeHandle, type SampleHandle } from "../telemetry/index.ts";

/** How many leader appends are remembered for commitTime; older ones are not timed. */
const APPEND_RING = 1024;

export class RaftMetrics {
  private readonly applyCount: CounterHandle;
  private readonly commitTime: SampleHandle;
  private readonly fsmApply: SampleHandle;
  private readonly commitNumLogs: SampleHandle;
  private readonly dispatchLog: SampleHandle;
  private readonly dispatchNumLogs: SampleHandle;
  private readonly storeLogs: SampleHandle;
  private readonly lastContact: SampleHandle;
  private readonly roles: Readonly<Record<string, CounterHandle>>;
  readonly snapshotTake: SampleHandle;
  readonly logSync: SampleHandle;
  readonly snapshotPersist: SampleHandle;
  private readonly lastIndex: GaugeHandle;
  private readonly appliedIndex: GaugeHandle;
  private readonly isLeader: GaugeHandle;
  /** Leader appends not yet committed: the last index of each batch and when it was appended (a ring). */
  private readonly appendIndex = new Float64Array(APPEND_RING);
  private readonly appendAt = new Float64Array(APPEND_RING);
  private appendHead = 0;
  private appendSize = 0;

  /** Without a registry every record is dropped. */
  constructor(registry: MetricsRegistry | undefined, readonly monotonic: () => number) {
    const r = registry ?? new MetricsRegistry({ now: () => 0, filter: () => false });
    this.applyCount = r.counter("raft.apply");
    this.commitTime = r.sample("raft.commitTime");
    this.fsmApply = r.sample("raft.fsm.apply");
    this.commitNumLogs = r.sample("raft.commitNumLogs");
    this.dispatchLog = r.sample("raft.leader.dispatchLog");
    this.dispatchNumLogs = r.sample("raft.leader.dispatchNumLogs");
    this.storeLogs = r.sample("raft.rpc.appendEntries.storeLogs");
    this.lastContact = r.sample("raft.leader.lastContact");
    this.roles = { Leader: r.counter("raft.state.leader"), Follower: r.counter("raft.state.follower"), Candidate: r.counter("raft.state.candidate"), PreCandidate: r.counter("raft.state.candidate") };
    this.snapshotTake = r.sample("raft.snapshot.takeSnapshot");
    this.logSync = r.sample("raft.logstore.sync");
    this.snapshotPersist = r.sample("raft.snapshot.persist");
    this.lastIndex = r.gauge("raft.last_index");
    this.appliedIndex = r.gauge("raft.applied_index");
    this.isLeader = r.gauge("server.isLeader");
    this.isLeader.set(0);
  }

  /** The role changed to `role` (a RawNode raftState); a new leadership starts with no appends pending. */
  roleEntered(role: string): void {
    this.roles[role]?.add();
    this.isLeader.set(role === "Leader" ? 1 : 0);
    this.appendSize = 0;
  }

  /**
   * A batch was written to the log (and synced) in `ms`: `entries` entries, `commands` of them with a
   * command, the last at `lastIndex`, appended at `startedAt`.
   */
  stored(leader: boolean, entries: number, commands: number, lastIndex: number, startedAt: number, ms: number): void {
    if (!leader) {
      this.storeLogs.observe(ms);
      return;
    }
    this.dispatchLog.observe(ms);
    this.dispatchNumLogs.observe(entries);
    if (commands > 0) this.applyCount.add(commands);
    const slot = (this.appendHead + this.appendSize) % APPEND_RING;
    this.appendIndex[slot] = lastIndex;
    this.appendAt[slot] = startedAt;
    if (this.appendSize < APPEND_RING) this.appendSize++;
    else this.appendHead = (this.appendHead + 1) % APPEND_RING;
  }

  /** `count` entries were committed, the last at `lastIndex`, handed to the state machine now. */
  committed(leader: boolean, count: number, lastIndex: number, now: number): void {
    this.commitNumLogs.observe(count);
    if (!leader) return;
    // Every remembered batch up to lastIndex is committed now: time each from its append.
    while (this.appendSize > 0 && this.appendIndex[this.appendHead]! <= lastIndex) {
      this.commitTime.observe(now - this.appendAt[this.appendHead]!);
      this.appendHead = (this.appendHead + 1) % APPEND_RING;
      this.appendSize--;
    }
  }

  fsmApplied(ms: number): void {
    this.fsmApply.observe(ms);
  }

  private tickNow = 0;
  private readonly observeContact = (heardAt: number) => this.lastContact.observe(this.tickNow - heardAt);

  /** Each tick: the log's indexes, and on a leader each peer's time since it was last heard (monotonic ms). */
  ticked(lastIndex: number, applied: number, now: number, peerHeardAt?: ReadonlyMap<string, number>): void {
    this.lastIndex.set(lastIndex);
    this.appliedIndex.set(applied);
    this.tickNow = now;
    peerHeardAt?.forEach(this.observeContact);
  }
}
