/**
 * Deterministic whole-cluster simulation of the consensus layer: N servers in one process on a
 * simulated clock, seeded randomness, a faulty network and crashing disks, concurrent KV clients, and
 * checkers for election safety, log matching, state machine safety and linearizability.
 *
 * A run has a safety phase (faults, partitions, crashes and membership changes) and a liveness phase
 * (network healed, everyone restarted) that must converge within a time budget. Everything is drawn
 * from the seed: the same seed replays the same run. One run in FIGURE8_SHARE replaces the nemesis
 * with the "Figure 8" one (figure8_nemesis.ts) on five servers.
 */
import {
  addServerSafely, createConsensusNode, openLogStore, ProposalDroppedError, ProposalTooLargeError, type ConsensusNode, type DurableLogStore,
} from "../../src/consensus/index.ts";
import { seededRng, silentLogger, type Logger, type Rng } from "../../src/platform/index.ts";
import { RawNode, type Config as RaftConfig, type Entry } from "../../src/raft/index.ts";
import { checkLinearizable, kvModel, type KvInput, type KvOutput, type Operation } from "../harness/linearizability.ts";
import { encodeKvCommand, kvStateMachine, type KvResult, type KvStateMachine } from "../harness/kv_state_machine.ts";
import { simFileSystem, type SimFileSystem } from "../harness/sim_fs.ts";
import { simClock, type SimClock } from "../harness/sim_clock.ts";
import { simNetwork, type SimNetwork } from "../harness/sim_network.ts";
import { ApplySafety, checkLogMatching, ElectionSafety } from "./checkers.ts";
import { CommitSafety, hasUncommittedTail, observeCommits } from "./commit_safety.ts";
import {
  ENTRY_BYTES, frameLimited, MISCONFIGURED_ENTRY_BYTES, OVERSIZED_SHARE, oversizedEntryBytes, paddedCommand,
} from "./entry_limits.ts";
import { runFigure8Nemesis, type Figure8Nemesis } from "./figure8_nemesis.ts";

export interface SimOptions {
  readonly seed: number;
  /** Simulated milliseconds of the fault phase. */
  readonly safetyMs?: number;
  /** Simulated milliseconds the healed cluster has to converge. */
  readonly livenessBudgetMs?: number;
  /** Replaces the Raft core (for proving the checkers catch a broken variant). */
  readonly createRawNode?: (config: RaftConfig) => RawNode;
  /** Logs of every server go here (for replaying a failing seed); default silent. */
  readonly logger?: Logger;
}

export interface SimResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violations: readonly string[];
  /**
   * Counters of the run. Among them: `figure8` (1 when the Figure 8 nemesis ran) and `uncommittedTails`,
   * how many elections produced a leader whose log held entries of earlier terms past its commit index.
   */
  readonly stats: Readonly<Record<string, number>>;
}

const TICK_MS = 10;
const ELECTION_TICKS = 10;
/** One seed in this many runs the Figure 8 nemesis (drawn from its own stream: other runs are unchanged). */
const FIGURE8_SHARE = 4;

interface Server {
  readonly id: string;
  /** The server's disk; survives crashes (minus what was not synced). */
  readonly fs: SimFileSystem;
  store: DurableLogStore | undefined;
  sm: KvStateMachine;
  node: ConsensusNode<KvResult> | undefined;
  up: boolean;
}

export async function runSimulation(options: SimOptions): Promise<SimResult> {
  const seed = options.seed;
  const rng = seededRng(seed);
  const clock = simClock();
  const figure8 = seededRng((seed * 2246822519 + 8) >>> 0).int(FIGURE8_SHARE) === 0;
  // Each draw below is made whatever the mode, so a run without the Figure 8 nemesis is unchanged by it.
  const n = rng.next() < 0.5 && !figure8 ? 3 : 5;
  // One run in three churns leaders hard: the leader crashes often and briefly, and every append
  // carries one entry, which opens narrow windows (the Figure 8 nemesis is what reaches Figure 8's).
  const churn = rng.int(3) === 0 && !figure8;
  const net = simNetwork(clock, seededRng(seed ^ 0x5bd1e995), {
    drop: rng.next() * 0.1,
    duplicate: rng.next() * 0.05,
    minDelayMs: 1,
    maxDelayMs: 2 + rng.int(20),
  });
  const election = new ElectionSafety();
  const applies = new ApplySafety();
  const commits = new CommitSafety();
  const history: Operation<KvInput, KvOutput>[] = [];
  const stats = {
    tornWrites: 0, crashes: 0, partitions: 0, membershipChanges: 0, opsOk: 0, opsFailed: 0, snapshots: 0,
    oversized: 0, oversizedApplied: 0, tooLargeRefused: 0, tooLargeRefusedByLeader: 0, overFrameDropped: 0,
    uncommittedTails: 0,
  };
  // Drawn from their own stream, so the rest of a seed's run draws what it drew before.
  const limitsRng = seededRng((seed * 2654435761) >>> 0);
  const misconfigured = limitsRng.next() < 0.5 ? "s1" : "";
  const entryLimit = (id: string) => (id === misconfigured ? MISCONFIGURED_ENTRY_BYTES : ENTRY_BYTES);
  const servers = new Map<string, Server>();
  let nextServer = n + 1;
  const nodeRng = (id: string, inc: number) => seededRng((seed * 7919 + hash(id) * 31 + inc) >>> 0);
  let incarnations = 0;

  const startServer = async (s: Server, bootstrap: readonly string[] | undefined) => {
    s.sm = kvStateMachine((index, command) => applies.observeApply(s.id, index, command, clock.monotonic()));
    const logger = (options.logger ?? silentLogger()).named(s.id);
    let core: RawNode | undefined;
    const createRawNode = (config: RaftConfig) => {
      const raw = options.createRawNode ? options.createRawNode(config) : new RawNode(config);
      core = observeCommits(raw, (e, by) => commits.observeCommitted(s.id, e, by, clock.monotonic()));
      return core;
    };
    s.store = openLogStore({ fs: s.fs, dir: "/raft", logger, segmentBytes: 4096 + rng.int(16384) });
    const node = createConsensusNode<KvResult>({
      id: s.id,
      clock,
      rng: nodeRng(s.id, incarnations++),
      logger,
      log: s.store,
      transport: frameLimited(net.transport(s.id), () => stats.overFrameDropped++),
      stateMachine: trackRestores(s.sm, (index) => applies.observeRestore(s.id, index)),
      bootstrapVoters: bootstrap,
      tickMs: TICK_MS,
      electionTicks: ELECTION_TICKS,
      heartbeatTicks: 1,
      snapshotEntries: 64 + rng.int(64),
      keepEntries: 16,
      requestTimeoutMs: 1000,
      maxInflightMsgs: 16,
      maxSizePerMsg: churn || figure8 ? 1 : 64 * 1024,
      maxEntryBytes: entryLimit(s.id),
      createRawNode,
    });
    node.onLeaderChange((leader, term) => {
      if (leader !== s.id) return;
      election.observeLeader(term, s.id, clock.monotonic());
      if (core && hasUncommittedTail(core)) stats.uncommittedTails++;
    });
    s.node = node;
    s.up = true;
    await node.start();
  };

  const ids = Array.from({ length: n }, (_, i) => `s${i + 1}`);
  for (const id of ids) servers.set(id, { id, fs: simFileSystem(), store: undefined, sm: kvStateMachine(), node: undefined, up: false });
  for (const s of servers.values()) await startServer(s, ids);

  const upServers = () => [...servers.values()].filter((s) => s.up && s.node);
  const crash = async (s: Server) => {
    if (!s.up) return;
    stats.crashes++;
    s.up = false;
    net.disconnect(s.id);
    await s.node!.stop();
    const report = s.fs.crash(rng);
    if (report.files.some((f) => f.torn)) stats.tornWrites++;
  };
  const restart = async (s: Server) => {
    if (s.up) return;
    await startServer(s, undefined);
  };

  // ---- clients ----
  const keys = ["a", "b", "c"];
  let clientsRunning = true;
  const clientLoop = async (clientId: number, crng: Rng) => {
    const sizeRng = seededRng((seed * 7 + clientId * 104729 + 1) >>> 0);
    let opSeq = 0;
    while (clientsRunning) {
      await sleep(clock, 5 + crng.int(40));
      if (!clientsRunning) return;
      const targets = upServers();
      if (!targets.length) continue;
      const s = targets[crng.int(targets.length)]!;
      const key = keys[crng.int(keys.length)]!;
      const kind = crng.int(3);
      // Unique per operation, so a command applied twice is visible to the apply checker.
      const value = `${clientId}.${++opSeq}`;
      // A cas compares against the value this server last saw half the time, so swaps succeed sometimes.
      const expected = crng.next() < 0.5 ? s.sm.get(key) : crng.next() < 0.5 ? undefined : `${crng.int(4)}.${crng.int(1000)}`;
      const input: KvInput = kind === 0 ? { op: "get", key } : kind === 1 ? { op: "put", key, value } : { op: "cas", key, expected, value };
      const callTime = clock.monotonic();
      const oversized = input.op === "put" && sizeRng.next() < OVERSIZED_SHARE ? oversizedEntryBytes(sizeRng) : 0;
      try {
        let output: KvOutput;
        if (input.op === "get") {
          await s.node!.read();
          output = { value: s.sm.get(key) };
        } else {
          const command = input.op === "put" ? { op: "put" as const, key, value } : { op: "cas" as const, key, expected, value };
          if (oversized) stats.oversized++;
          const r = await s.node!.propose(oversized ? paddedCommand(command, oversized) : encodeKvCommand(command));
          if (oversized) stats.oversizedApplied++;
          output = input.op === "cas" ? { ok: r.ok } : {};
        }
        history.push({ clientId, input, output, callTime, returnTime: clock.monotonic() });
        stats.opsOk++;
      } catch (err) {
        stats.opsFailed++;
        if (err instanceof ProposalTooLargeError) {
          stats.tooLargeRefused++;
          // Within the proposer's own limit: the leader refused it and said so (MsgPropTooLarge).
          if (oversized <= entryLimit(s.id)) stats.tooLargeRefusedByLeader++;
        }
        // A failed read and a dropped proposal had no effect; any other failed write may have been applied.
        if (input.op !== "get" && !(err instanceof ProposalDroppedError)) {
          history.push({ clientId, input, output: {}, callTime, returnTime: Infinity });
        }
      }
    }
  };
  const clients = Array.from({ length: 4 }, (_, i) => clientLoop(i, seededRng((seed * 131 + i) >>> 0)));

  // ---- nemesis: faults during the safety phase ----
  const safetyMs = options.safetyMs ?? 6000;
  const nemesis = async () => {
    const end = clock.monotonic() + safetyMs;
    if (figure8) return runFigure8Nemesis(figure8Nemesis(), end);
    while (clock.monotonic() < end) {
      await sleep(clock, churn ? 100 + rng.int(300) : 200 + rng.int(800));
      const all = [...servers.values()];
      if (churn && rng.next() < 0.7) {
        const leader = upServers().find((s) => s.node!.status().role === "Leader");
        if (leader && upServers().length > 1) {
          if (rng.next() < 0.5) {
            await crash(leader);
            void sleep(clock, 20 + rng.int(300)).then(() => restart(leader));
          } else {
            // Cut the leader off while it holds unreplicated entries, then let it back.
            net.heal();
            net.partition([[leader.id], all.map((x) => x.id).filter((id) => id !== leader.id)]);
            stats.partitions++;
            void sleep(clock, 50 + rng.int(300)).then(() => net.heal());
          }
        }
        continue;
      }
      const action = rng.int(10);
      if (action <= 2) {
        const shuffled = shuffle(all.map((s) => s.id), rng);
        const cut = 1 + rng.int(shuffled.length - 1);
        net.heal();
        net.partition([shuffled.slice(0, cut), shuffled.slice(cut)]);
        stats.partitions++;
      } else if (action === 3) {
        const a = all[rng.int(all.length)]!.id, b = all[rng.int(all.length)]!.id;
        if (a !== b) net.block(a, b);
        stats.partitions++;
      } else if (action <= 5) {
        net.heal();
      } else if (action <= 7) {
        const victim = all[rng.int(all.length)]!;
        if (victim.up && upServers().length > 1) {
          await crash(victim);
          const downFor = 100 + rng.int(1500);
          void sleep(clock, downFor).then(() => restart(victim));
        }
      } else if (action === 8) {
        const leader = upServers().find((s) => s.node!.status().role === "Leader");
        const others = upServers().filter((s) => s !== leader);
        if (leader && others.length) leader.node!.transferLeadership(others[rng.int(others.length)]!.id);
      } else {
        await changeMembership();
      }
    }
  };

  let figure8Writes = 0;
  const figure8Nemesis = (): Figure8Nemesis<Server> => ({
    clock, rng, crash, restart,
    electionMs: ELECTION_TICKS * TICK_MS,
    servers: () => [...servers.values()],
    isLeader: (s) => s.node!.status().role === "Leader",
    // Its own key, outside the checked history: the apply and commit checkers see these writes.
    propose: (s) => void s.node!.propose(encodeKvCommand({ op: "put", key: "f8", value: `n.${++figure8Writes}` })).catch(() => {}),
  });

  /** Adds a fresh server as a learner and promotes it, or removes a voter (keeping at least 3). */
  const changeMembership = async () => {
    const leader = upServers().find((s) => s.node!.status().role === "Leader");
    if (!leader) return;
    const voters = leader.node!.status().config.voters;
    try {
      if (voters.length > 3 && rng.next() < 0.5) {
        const victim = voters[rng.int(voters.length)]!;
        await leader.node!.changeMembership({ transition: "Auto", changes: [{ type: "RemoveNode", nodeId: victim }] });
        stats.membershipChanges++;
        const s = servers.get(victim);
        if (s) {
          await crash(s);
          servers.delete(victim);
        }
      } else if (voters.length < 5) {
        const id = `s${nextServer++}`;
        const s: Server = { id, fs: simFileSystem(), store: undefined, sm: kvStateMachine(), node: undefined, up: false };
        servers.set(id, s);
        await startServer(s, undefined);
        await addServerSafely(leader.node!, id, { clock, pollMs: 20, catchUpTimeoutMs: 2000 });
        stats.membershipChanges++;
      }
    } catch {
      // Membership changes race with faults; a failed one is simply not counted.
    }
  };

  let nemesisDone = false;
  const nemesisRun = nemesis().then(() => (nemesisDone = true));
  // A healthy run sends some thousands of messages; a storm means a livelock (or a broken core).
  const maxMessages = 60_000;
  const storming = () => net.stats().sent > maxMessages;
  while (!nemesisDone && !storming()) await step(clock);
  if (storming()) {
    for (const s of servers.values()) await s.node?.stop();
    const found = [...election.violations, ...applies.violations, ...commits.violations, `message storm: more than ${maxMessages} messages by t=${clock.monotonic()}ms`];
    return { seed, ok: false, violations: found, stats: { figure8: figure8 ? 1 : 0, ...stats, ...net.stats() } };
  }
  await nemesisRun;

  // ---- liveness: heal, restart everyone, then a write must commit and every server must converge ----
  net.heal();
  net.faults = { drop: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 2 };
  for (const s of servers.values()) if (!s.up) await restart(s);
  const violations: string[] = [];
  const budget = options.livenessBudgetMs ?? 8000;
  const deadline = clock.monotonic() + budget;
  let finalWrite: "pending" | "ok" | "failed" = "pending";
  let finalAttempts = 0;
  let finalValue = "";
  const writeUntilDone = async () => {
    while (clock.monotonic() < deadline) {
      const leader = upServers().find((s) => s.node!.status().role === "Leader");
      if (leader) {
        try {
          const value = `done-${++finalAttempts}`;
          await leader.node!.propose(encodeKvCommand({ op: "put", key: "final", value }));
          finalValue = value;
          finalWrite = "ok";
          return;
        } catch {
          // try again
        }
      }
      await sleep(clock, 50);
    }
    finalWrite = "failed";
  };
  void writeUntilDone();
  const converged = () => {
    if (finalWrite !== "ok") return false;
    // Servers whose addition never committed are not members; they have nothing to converge to.
    const leader = upServers().find((s) => s.node!.status().role === "Leader");
    if (!leader) return false;
    const config = leader.node!.status().config;
    const members = [...servers.values()].filter((s) => config.voters.includes(s.id) || config.learners.includes(s.id));
    const target = Math.max(...members.map((s) => s.node!.status().commit));
    return members.every((s) => s.node!.status().applied >= target && s.sm.get("final") === finalValue);
  };
  while (clock.monotonic() < deadline && !converged() && !storming()) await step(clock);
  if (storming()) violations.push(`message storm: more than ${maxMessages} messages by t=${clock.monotonic()}ms`);
  if (!converged()) {
    const st = [...servers.values()].map((s) => `${s.id}:${s.node!.status().role}/t${s.node!.status().term}/c${s.node!.status().commit}/a${s.node!.status().applied}`);
    violations.push(`liveness: no convergence within ${budget}ms after healing (final write ${finalWrite}; ${st.join(" ")})`);
  }
  clientsRunning = false;
  for (let i = 0; i < 200 && clock.pending() > 0; i++) await step(clock);
  await Promise.race([Promise.all(clients), Promise.resolve()]);

  // ---- checks ----
  violations.push(...election.violations, ...applies.violations, ...commits.violations);
  for (const s of servers.values()) await s.node?.stop();
  violations.push(...checkLogMatching(new Map([...servers.values()].map((s) => [s.id, durableEntries(s)]))));
  const lin = checkLinearizable(kvModel, history, 2_000_000);
  if (lin.kind === "illegal") violations.push(`not linearizable (key partition ${lin.partition}); longest linearizable prefix:\n  ${lin.longestPrefix.join("\n  ")}`);
  if (lin.kind === "unknown") violations.push(`linearizability check inconclusive: ${lin.reason}`);
  return {
    seed,
    ok: violations.length === 0,
    violations,
    stats: { nodes: n, churn: churn ? 1 : 0, figure8: figure8 ? 1 : 0, terms: election.terms(), ops: history.length, maxIndex: applies.maxIndex(), simMs: clock.monotonic(), ...stats, ...net.stats() },
  };
}

/** Runs the next timer and lets every promise chain it started settle. */
async function step(clock: SimClock): Promise<void> {
  if (!clock.runNext()) clock.advance(TICK_MS);
  await new Promise<void>((r) => setImmediate(r));
}

/** The entries a server would recover from its disk right now (read through a second store handle). */
function durableEntries(s: Server): readonly Entry[] {
  s.store?.close();
  const reader = openLogStore({ fs: s.fs, dir: "/raft", logger: silentLogger() });
  const entries = reader.recover().entries;
  reader.close();
  return entries;
}

function sleep(clock: SimClock, ms: number): Promise<void> {
  return new Promise((r) => clock.setTimer(ms, r));
}

function shuffle<T>(xs: T[], rng: Rng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

function trackRestores(sm: KvStateMachine, onRestore: (index: number) => void): KvStateMachine {
  return {
    ...sm,
    apply: sm.apply,
    get: sm.get,
    restore(data) {
      sm.restore(data);
      onRestore(sm.lastIndex());
    },
  };
}
