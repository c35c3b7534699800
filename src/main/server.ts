/**
 * The server half of an agent: the server port (one listener, many protocols), Raft over it with a
 * durable log in `<data_dir>/raft`, and the internal RPC services with their connection pool.
 *
 * Servers find each other through gossip (a later issue); until then a server knows only itself, so it
 * runs a cluster of one when bootstrapping (-dev, or bootstrap_expect = 1) and otherwise waits.
 */
import { join } from "node:path";
import {
  createConsensusNode, createTcpTransport, decodeMessage, encodeMessage, openLogStore, type ConsensusNode,
} from "../consensus/index.ts";
import type { RaftStatus } from "../http/index.ts";
import {
  createGrpcServer, cryptoRng, listenTcp, nodeFileSystem, type Clock, type Logger, type TcpListener,
} from "../platform/index.ts";
import {
  createRpcPool, createServerPort, createServerStateCaller, dialServer, registerStateService, registerStatusServices,
  type RpcContext, type RpcTarget, type ServerDialSettings, type StateCaller,
} from "../rpc/index.ts";
import type { PoolMember } from "../membership/index.ts";
import type { StateResult } from "../state/index.ts";
import { createReplicatedState } from "./replicated_state.ts";
import type { RuntimeConfig } from "./config.ts";
import type { LoadedTls } from "./tls_files.ts";
import { decideBootstrap, reconcileServers, type SeenServer } from "./raft_membership.ts";
import { addServerSafely } from "../consensus/index.ts";
import { createClient, createRouterTransport, type ConnectRouter, type Transport } from "@connectrpc/connect";
import { Status } from "../gen/causeway/status/v1/status_pb.ts";

export interface RunningServer {
  /** The server port's `host:port` as bound. */
  readonly address: string;
  /** The bound server port. */
  readonly port: number;
  /**
   * What the LAN pool shows of this datacenter's servers. Drives the server directory, the
   * bootstrap_expect bootstrap and, on the leader, adding and removing Raft servers.
   */
  updateServers(seen: readonly SeenServer[]): void;
  readonly raft: RaftStatus;
  readonly consensus: ConsensusNode<StateResult>;
  /** The internal RPC services of this server, called in process (they forward as needed). */
  readonly rpc: () => Transport;
  /** The replicated state as this server's own HTTP API reaches it (served here or forwarded). */
  readonly state: StateCaller;
  /** The LAN pool's members now: the leader keeps the catalog in step with them. */
  updateMembers(members: readonly PoolMember[]): void;
  /**
   * Before a graceful leave: a leader with other voters hands leadership to the most caught-up one
   * and waits (up to `timeoutMs`) to be a follower, so the cluster does not sit out an election
   * timeout; the new leader then removes this server when gossip shows it left (Consul's Server.Leave).
   */
  stepDown(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}


export interface ServerInfo {
  readonly node: string;
  readonly address: string;
}

export async function startServer(o: {
  config: RuntimeConfig;
  logger: Logger;
  clock: Clock;
  dataDir: string;
  nodeId: string;
  advertiseAddr: string;
  tls: LoadedTls | undefined;
  /** Datacenters known from the WAN pool, nearest first (served to client agents over RPC). */
  datacenters: () => readonly string[];
  /** Alive servers of another datacenter, from the WAN pool: node name and server-port address. */
  remoteServers: (datacenter: string) => readonly ServerInfo[];
}): Promise<RunningServer> {
  const { config, logger, clock, nodeId } = o;
  const cleanups: (() => unknown)[] = [];
  /** Stops every part in reverse order of start; a part that fails to stop does not keep the others running. */
  const close = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        logger.warn("server shutdown step failed", { error: err });
      }
    }
  };
  try {
    const port = createServerPort({ logger: logger.named("server-port"), clock, tls: o.tls ? { material: o.tls.material, verifyIncomingRpc: o.tls.verifyIncomingRpc } : undefined });
    cleanups.push(() => port.close());
    const listener: TcpListener = await listenTcp({ host: config.bindAddr, port: config.ports.server, onConnection: (s) => port.accept(s) });
    cleanups.push(() => listener.close());
    const self: ServerInfo = { node: config.nodeName, address: `${o.advertiseAddr}:${listener.port}` };
    /** Servers of this datacenter by Raft ID (the node ID). Gossip fills this in a later issue. */
    const servers = new Map<string, ServerInfo>([[nodeId, self]]);
    const hostPort = (address: string) => {
      const i = address.lastIndexOf(":");
      return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
    };

    const dialSettings: ServerDialSettings = {
      datacenter: config.datacenter,
      domain: config.domain,
      tls: o.tls ? { material: o.tls.material, verifyOutgoing: o.tls.verifyOutgoing } : undefined,
    };

    const transport = createTcpTransport({
      localId: nodeId,
      codec: { encode: encodeMessage, decode: decodeMessage },
      logger: logger.named("raft-transport"),
      clock,
      rng: cryptoRng(),
      resolve: (peer) => {
        const s = servers.get(peer);
        return s ? hostPort(s.address) : undefined;
      },
      dial: async (peer) => {
        const s = servers.get(peer);
        if (!s) throw new Error(`no address known for server ${peer}`);
        return dialServer(dialSettings, s.address, { datacenter: config.datacenter, node: s.node }, "raft");
      },
    });
    cleanups.push(() => transport.close());
    port.serve("raft", (s) => transport.accept(s));

    const log = openLogStore({ fs: nodeFileSystem(), dir: join(o.dataDir, "raft"), logger: logger.named("raft-log") });
    cleanups.push(() => log.close());
    const bootstrap = config.dev || config.bootstrapExpect === 1;
    const replicated = createReplicatedState({ clock, logger: logger.named("state"), datacenter: config.datacenter, nodeName: config.nodeName, connectCa: config.connectEnabled });
    const consensus = createConsensusNode<StateResult>({
      id: nodeId,
      clock,
      rng: cryptoRng(),
      logger: logger.named("raft"),
      log,
      transport,
      stateMachine: replicated.stateMachine,
      bootstrapVoters: bootstrap ? [nodeId] : undefined,
      tickMs: config.dev ? 50 : 100,
      // Consul's raft snapshot_threshold and snapshot_interval: a snapshot serialises the whole state
      // store on the event loop, so under sustained writes one every 2 minutes keeps latency tails down.
      snapshotEntries: 16_384,
      snapshotIntervalMs: 120_000,
    });
    replicated.attach(consensus);
    let lanMembers: readonly PoolMember[] = [];
    consensus.onLeaderChange((leaderId) => {
      replicated.setLeader(leaderId === nodeId);
      if (leaderId === nodeId) void replicated.reconcileMembers(lanMembers);
    });
    await consensus.start();
    cleanups.push(() => consensus.stop());
    cleanups.push(() => replicated.setLeader(false));
    // Consul's periodic reconcile (reconcile_interval 60 s) repairs anything a missed event left behind.
    const stopMemberReconcile = clock.setInterval(60_000, () => void replicated.reconcileMembers(lanMembers));
    cleanups.push(() => stopMemberReconcile());

    const rpcRng = cryptoRng();
    const pool = createRpcPool({
      dial: (target: RpcTarget) => {
        const candidates = target.datacenter === config.datacenter ? [...servers.values()] : o.remoteServers(target.datacenter);
        const matching = candidates.filter((s) => !target.node || s.node === target.node);
        if (!matching.length) return Promise.reject(new Error(`no server known for ${target.node ?? "any node"} in ${target.datacenter}`));
        // Any server of another datacenter will do: spread over them, a failed one is redialled next time.
        const found = matching[rpcRng.int(matching.length)]!;
        return dialServer(dialSettings, found.address, target, "rpc");
      },
      clock,
      rng: cryptoRng(),
      logger: logger.named("rpc-pool"),
    });
    cleanups.push(() => pool.close());
    const ctx: RpcContext = {
      datacenter: config.datacenter,
      node: config.nodeName,
      raft: consensus,
      servers: { lookup: (id) => servers.get(id) },
      pool,
      datacenters: o.datacenters,
    };
    const stateCaller = createServerStateCaller(ctx, replicated.backend);
    const routes = (r: ConnectRouter) => {
      registerStatusServices(r, ctx);
      registerStateService(r, stateCaller);
    };
    const grpc = createGrpcServer({ routes, logger: logger.named("rpc") });
    // This server's own calls (the local HTTP API) go to the same services in process.
    const inProcess = createRouterTransport(routes);
    cleanups.push(() => grpc.close());
    for (const protocol of ["rpc", "multiplexed-rpc", "grpc"] as const) port.serve(protocol, (s) => grpc.acceptSocket(s));

    // Raft membership from gossip (Consul's maybeBootstrap, leader reconcile, autopilot cleanup).
    let seen: readonly SeenServer[] = [];
    const failedSince = new Map<string, number>();
    let bootstrapped = bootstrap;
    let reconciling = false;
    const raftLog = logger.named("raft");
    /** bootstrap_expect: bootstrap a new cluster once enough servers are seen and none of them has one. */
    const maybeBootstrap = async (st: ReturnType<typeof consensus.status>) => {
      if (st.lastIndex > 0 || st.term > 0) {
        bootstrapped = true; // this server already belongs to a cluster
      } else {
        const d = decideBootstrap(config.bootstrapExpect, nodeId, seen);
        if (d.kind === "refuse") raftLog.error("not bootstrapping", { reason: d.reason });
        if (d.kind === "bootstrap") {
          // Consul's maybeBootstrap: never start a second cluster. Ask every other server for its Raft
          // peers first; if any has a configuration already, it will bring us in instead.
          const others = seen.filter((x) => x.status === "alive" && x.id !== nodeId);
          const answers = await Promise.all(others.map(async (x) => {
            try {
              const r = await createClient(Status, pool.transport({ datacenter: config.datacenter, node: x.name })).peers({}, { timeoutMs: 5000 });
              return r.addresses.length > 0 ? "has-cluster" : "empty";
            } catch {
              return "unreachable";
            }
          }));
          if (answers.includes("has-cluster")) {
            bootstrapped = true;
            raftLog.info("not bootstrapping: another server already belongs to a cluster, which will add this one");
            return;
          }
          if (answers.includes("unreachable")) {
            raftLog.debug("not bootstrapping yet: some servers did not answer a peers query");
            return;
          }
          bootstrapped = true;
          const did = await consensus.bootstrap(d.voters);
          raftLog.info(did ? "bootstrapped from gossip" : "joined an existing cluster instead of bootstrapping", { voters: d.voters.join(",") });
        }
      }
    };
    let bootstrapChecking = false;
    const reconcile = async () => {
      const st = consensus.status();
      if (!bootstrapped && !bootstrapChecking && config.bootstrapExpect > 1) {
        bootstrapChecking = true;
        try {
          await maybeBootstrap(st);
        } finally {
          bootstrapChecking = false;
        }
      }
      if (st.role !== "Leader" || reconciling) return;
      // Configured servers that gossip no longer shows count as failed from the moment we notice.
      const seenIds = new Set(seen.map((x) => x.id));
      for (const id of [...st.config.voters, ...st.config.learners]) {
        if (id !== nodeId && !seenIds.has(id) && !failedSince.has(id)) failedSince.set(id, clock.monotonic());
      }
      const steps = reconcileServers(st.config.voters, st.config.learners, seen, failedSince, clock.monotonic(), 30_000);
      if (!steps.length) return;
      reconciling = true;
      try {
        for (const step of steps) {
          if (step.kind === "add") {
            raftLog.info("adding server", { id: step.id, node: step.name });
            await addServerSafely(consensus, step.id, { clock });
          } else if (step.kind === "promote") {
            // A learner left behind by an interrupted add: promote it once it has caught up.
            const p = consensus.progress(step.id);
            if (!p || p.match < consensus.status().commit) continue;
            raftLog.info("promoting server", { id: step.id, node: step.name });
            await consensus.changeMembership({ transition: "Auto", changes: [{ type: "AddNode", nodeId: step.id }] });
          } else {
            raftLog.info("removing server", { id: step.id, node: step.name, reason: step.reason });
            await consensus.changeMembership({ transition: "Auto", changes: [{ type: "RemoveNode", nodeId: step.id }] });
          }
        }
      } catch (err) {
        raftLog.warn("server reconcile step failed; will retry", { error: err });
      } finally {
        reconciling = false;
      }
    };
    const stopReconcile = clock.setInterval(1000, () => void reconcile());
    cleanups.push(() => stopReconcile());

    return {
      address: `${listener.host}:${listener.port}`,
      port: listener.port,
      consensus,
      state: stateCaller,
      rpc: () => inProcess,
      async stepDown(timeoutMs = 5_000) {
        const st = consensus.status();
        if (st.role !== "Leader") return;
        const others = st.config.voters.filter((id) => id !== nodeId);
        const target = others
          .map((id) => ({ id, match: consensus.progress(id)?.match ?? 0 }))
          .sort((a, b) => b.match - a.match)[0];
        if (!target) return;
        raftLog.info("leaving: transferring leadership", { to: target.id });
        consensus.transferLeadership(target.id);
        const deadline = clock.monotonic() + timeoutMs;
        while (consensus.status().role === "Leader" && clock.monotonic() < deadline) {
          await new Promise<void>((resolve) => clock.setTimer(50, resolve));
        }
        if (consensus.status().role === "Leader") raftLog.warn("leadership transfer did not complete before leaving");
      },
      updateMembers(members) {
        lanMembers = members;
        void replicated.reconcileMembers(members);
      },
      raft: {
        leader: () => {
          const id = consensus.status().leader;
          return id ? (servers.get(id)?.address ?? "") : "";
        },
        peers: () => consensus.status().config.voters.map((id) => servers.get(id)?.address ?? "").filter((a) => a !== ""),
      },
      updateServers(next) {
        seen = next.filter((x) => x.id !== "");
        const now = clock.monotonic();
        for (const x of seen) {
          if (x.status === "failed") {
            if (!failedSince.has(x.id)) failedSince.set(x.id, now);
          } else failedSince.delete(x.id);
          if (x.id !== nodeId && (x.status === "alive" || !servers.has(x.id))) servers.set(x.id, { node: x.name, address: x.rpcAddr });
        }
        void reconcile();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
