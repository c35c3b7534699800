/**
 * A server: the server port (one listener, many protocols), Raft over it with a durable log in
 * `<dataDir>/raft`, the replicated state as its state machine, the internal RPC services with their
 * connection pool, bootstrap from gossip, and the leader routines started and stopped with leadership.
 * What the LAN pool shows arrives through updateServers/updateMembers; nothing here knows flags or files
 * beyond the data dir.
 */
import { join } from "node:path";
import { createClient, createRouterTransport, type ConnectRouter, type Transport } from "@connectrpc/connect";
import {
  createConsensusNode, createTcpTransport, decodeMessage, encodeMessage, openLogStore, type ConsensusNode,
} from "../consensus/index.ts";
import { Status } from "../gen/causeway/status/v1/status_pb.ts";
import { shutdownStack } from "../lib/index.ts";
import { parseServer, type PoolMember } from "../membership/index.ts";
import { AUTOPILOT_DEFAULTS, type DatacenterMap } from "../model/index.ts";
import {
  createGrpcServer, cryptoRng, listenTcp, nodeFileSystem, type Clock, type Logger, type Rng, type TcpListener, type TlsMaterial,
} from "../platform/index.ts";
import {
  createRpcPool, createServerPort, createServerStateCaller, RpcMetrics, dialServer, registerStateService, registerStatusServices, RPC_HOLD_TIMEOUT_MS, transferLeadership,
  type GatewayRoute, type RpcContext, type RpcTarget, type ServerDialSettings, type StateCaller, type WanGossipHandlers,
} from "../rpc/index.ts";
import { autopilotConfigGet, encodeCommand, WatchSet, type StateResult } from "../state/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { GossipServer } from "./autopilot_health.ts";
import { createBootstrapper, type PeersAnswer } from "./bootstrap.ts";
import { secondaryCaRoutine } from "./leader_ca_secondary.ts";
import { federationRoutines } from "./leader_federation.ts";
import { gatedServers } from "./leader_federation_gate.ts";
import { autopilotRoutine, type AutopilotSeed } from "./leader_autopilot.ts";
import { raftMembershipRoutine } from "./leader_raft_membership.ts";
import { createLeaderRunner, dutyProposer } from "./leader_routines.ts";
import type { SeenServer } from "./raft_membership.ts";
import { createReplicatedState } from "./replicated_state.ts";
import { recordUsageMetrics } from "./usage_metrics.ts";
import { bootstrapResetFile } from "./acl_bootstrap_file.ts";
import { primaryTokenResolver } from "./acl_remote.ts";
import { aclReplicationOver, REPLICATION_DISABLED, type AclReplicationRoutine } from "./leader_acl_replication.ts";
import { createServerDirectory, type ServerInfo } from "./server_directory.ts";

/** What a server is started with (the agent's configuration maps onto this). */
export interface ServerOptions {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly datacenter: string;
  /** DNS domain, for the server names certificates carry (`server.<dc>.<domain>`). */
  readonly domain: string;
  readonly dataDir: string;
  /** Where the server port listens; port 0 binds a free port. */
  readonly bindAddr: string;
  readonly port: number;
  /** The address other servers reach this one at (without port). */
  readonly advertiseAddr: string;
  /** Start as a cluster of one (-dev, bootstrap_expect = 1). */
  readonly bootstrap: boolean;
  /** bootstrap_expect: bootstrap together once this many servers are seen (when > 1). */
  readonly bootstrapExpect: number;
  /** Raft tick; elections take 10-20 ticks. */
  readonly tickMs: number;
  /**
   * Consul's raft_snapshot_threshold (entries applied since the last snapshot; default 16384) and
   * raft_snapshot_interval (ms a due snapshot waits after the last one; default 120 s).
   */
  readonly raftSnapshot?: { readonly threshold?: number; readonly intervalMs?: number };
  /** Where Raft, RPC, write and leader-routine metrics go; absent: none are recorded. */
  readonly metrics?: MetricsRegistry;
  /** With ACLs enabled (`acl.enabled`): the settings the server enforces them with. */
  readonly acl?: {
    readonly masterToken: string; readonly defaultPolicy: "allow" | "deny"; readonly defaultToken: () => string; readonly enableKeyListPolicy: boolean;
    /** `acl.tokens.replication` now (it may be replaced at run time): what this server's duties present to other datacenters. */
    readonly replicationToken: () => string;
    /** Told when this server, as leader, has just written the builtin ACL objects or the master token. */
    readonly onInitialized?: () => void;
    /** In a secondary: `acl.token_ttl`, `acl.down_policy` and `acl.enable_token_replication` (tokens resolved through the primary). */
    readonly tokenTtlMs?: number;
    readonly downPolicy?: "allow" | "deny" | "extend-cache" | "async-cache";
    readonly enableTokenReplication?: boolean;
  };
  /** `connect { enabled }`: run the Connect CA. */
  readonly connectEnabled: boolean;
  /**
   * The agent's `autopilot` block: what a leader writes, over Consul's defaults (AUTOPILOT_DEFAULTS),
   * when the state holds no autopilot configuration yet. Later changes go through the HTTP API.
   */
  readonly autopilot?: Partial<AutopilotSeed>;
  readonly tls?: { readonly material: TlsMaterial; readonly verifyIncomingRpc: boolean; readonly verifyOutgoing: boolean; readonly verifyServerHostname?: boolean };
  /**
   * WAN federation through mesh gateways: the gateway to dial for a server in another datacenter (the
   * gateway locator's pick), and where the server port hands the WAN gossip tunnels. Absent: RPC to other
   * datacenters dials their servers directly and the wan-gossip protocols are refused.
   */
  readonly viaGateway?: (dc: string) => GatewayRoute;
  readonly wanGossip?: WanGossipHandlers;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Coordinate update batching (Consul's coordinate_update_period, _batch_size, _max_batches); Consul's defaults when absent. */
  readonly coordinateUpdate?: { readonly periodMs?: number; readonly batchSize?: number; readonly maxBatches?: number };
  /** Datacenters known from the WAN pool, nearest first (served to client agents over RPC). */
  datacenters(): readonly string[];
  /** Servers' WAN coordinates by datacenter, from the WAN pool (served to client agents over RPC); absent: not known here. */
  datacenterMaps?(): readonly DatacenterMap[];
  /** Alive servers of another datacenter, from the WAN pool: node name and server-port address. */
  remoteServers(datacenter: string): readonly ServerInfo[];
  /** `primary_datacenter`; this server's own datacenter when absent or "" (a single-datacenter setup). */
  readonly primaryDatacenter?: string;
  /**
   * The WAN pool's members now: a secondary's federation-state feature gate checks that the primary's
   * servers advertise `ft_fs`. Absent: no other datacenter's servers are known, so a secondary's
   * federation-state replication and anti-entropy wait.
   */
  wanMembers?(): readonly PoolMember[];
  /** Each federation-state replication fetch's outcome on a secondary's leader (the gateway locator's signal). */
  readonly onReplicationResult?: (ok: boolean) => void;
}

/**
 * Waits until `hasLeader()` or RPC_HOLD_TIMEOUT_MS passed, re-checking after a random stagger of up to
 * a sixteenth of the hold (Consul's forward: `lib.RandomStagger(rpcHoldTimeout / JitterFraction)`).
 */
function holdForLeader(hasLeader: () => boolean, clock: Clock, rng: Rng): Promise<void> {
  const deadline = clock.monotonic() + RPC_HOLD_TIMEOUT_MS;
  return new Promise<void>((resolve) => {
    const check = () => {
      if (hasLeader() || clock.monotonic() >= deadline) return resolve();
      clock.setTimer(Math.max(10, Math.floor(rng.next() * (RPC_HOLD_TIMEOUT_MS / 16))), check);
    };
    check();
  });
}

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
  /** The leader's address and the voters' addresses (`/v1/status/leader|peers`); "" / none when unknown. */
  readonly raft: { leader(): string; peers(): string[] };
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
  /**
   * Gracefully closes the RPC connections to other datacenters (calls under way finish), so later
   * calls dial the way there is now: call when the mesh gateways or the route to the primary changed.
   * Returns how many it closed.
   */
  retireRemoteConnections(): number;
  close(): Promise<void>;
}

const hostPort = (address: string) => {
  const i = address.lastIndexOf(":");
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
};

/** Starts a server. On failure, whatever was started is stopped again before the error propagates. */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const { clock, logger, nodeId } = o;
  const cleanups = shutdownStack((err) => logger.warn("server shutdown step failed", { error: err }));
  const close = () => cleanups.stopAll();
  try {
    const port = createServerPort({
      logger: logger.named("server-port"),
      clock,
      domain: o.domain,
      datacenter: o.datacenter,
      tls: o.tls ? { material: o.tls.material, verifyIncomingRpc: o.tls.verifyIncomingRpc, verifyServerHostname: o.tls.verifyServerHostname ?? false } : undefined,
      ...(o.wanGossip ? { wanGossip: o.wanGossip } : {}),
    });
    cleanups.push(() => port.close());
    const listener: TcpListener = await listenTcp({ host: o.bindAddr, port: o.port, onConnection: (s) => port.accept(s) });
    cleanups.push(() => listener.close());
    const directory = createServerDirectory({ id: nodeId, node: o.nodeName, address: `${o.advertiseAddr}:${listener.port}` });
    const dialSettings: ServerDialSettings = {
      datacenter: o.datacenter,
      domain: o.domain,
      tls: o.tls ? { material: o.tls.material, verifyOutgoing: o.tls.verifyOutgoing } : undefined,
      ...(o.viaGateway ? { viaGateway: o.viaGateway } : {}),
    };

    const transport = createTcpTransport({
      localId: nodeId,
      codec: { encode: encodeMessage, decode: decodeMessage },
      logger: logger.named("raft-transport"),
      clock,
      rng: cryptoRng(),
      resolve: (peer) => {
        const s = directory.lookup(peer);
        return s ? hostPort(s.address) : undefined;
      },
      dial: async (peer) => {
        const s = directory.lookup(peer);
        if (!s) throw new Error(`no address known for server ${peer}`);
        return dialServer(dialSettings, s.address, { datacenter: o.datacenter, node: s.node }, "raft");
      },
    });
    cleanups.push(() => transport.close());
    port.serve("raft", (s) => transport.accept(s));

    // The log in use: a full disk or an I/O error makes the consensus node reopen it (reopenLog).
    let log = openLogStore({ fs: nodeFileSystem(), dir: join(o.dataDir, "raft"), logger: logger.named("raft-log") });
    const reopenLog = () => (log = openLogStore({ fs: nodeFileSystem(), dir: join(o.dataDir, "raft"), logger: logger.named("raft-log") }));
    cleanups.push(() => log.close());
    /** The StateCaller, once made below: a secondary resolves tokens it does not hold through it. */
    let ownCaller: StateCaller | undefined;
    /** The secondary's ACL replication routine, once made below (its status is a read the state backend serves). */
    let aclReplication: AclReplicationRoutine | undefined;
    const aclRemote = (acl: NonNullable<ServerOptions["acl"]>) =>
      o.primaryDatacenter && o.primaryDatacenter !== o.datacenter
        ? {
          replicationStatus: () => aclReplication?.status() ?? REPLICATION_DISABLED,
          remote: {
            tokenReplication: acl.enableTokenReplication ?? false,
            resolver: primaryTokenResolver({
              caller: () => ownCaller, primaryDatacenter: o.primaryDatacenter, datacenter: o.datacenter, nodeName: o.nodeName, clock,
              ttlMs: acl.tokenTtlMs ?? 30_000, defaultPolicy: acl.defaultPolicy, downPolicy: acl.downPolicy ?? "extend-cache",
            }),
          },
        }
        : {};
    const replicated = createReplicatedState({
      clock, logger: logger.named("state"), datacenter: o.datacenter, nodeName: o.nodeName, connectCa: o.connectEnabled, coordinateUpdate: o.coordinateUpdate,
      ...(o.primaryDatacenter ? { primaryDatacenter: o.primaryDatacenter } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.acl ? { acl: { ...o.acl, bootstrapReset: bootstrapResetFile(nodeFileSystem(), o.dataDir, logger.named("acl")), ...aclRemote(o.acl) } } : {}),
    });
    const consensus = createConsensusNode<StateResult>({
      id: nodeId,
      clock,
      rng: cryptoRng(),
      logger: logger.named("raft"),
      log,
      reopenLog,
      transport,
      stateMachine: replicated.stateMachine,
      bootstrapVoters: o.bootstrap ? [nodeId] : undefined,
      tickMs: o.tickMs,
      // Consul's raft_snapshot_threshold and raft_snapshot_interval. A snapshot is encoded off the Raft
      // loop in slices, but it still costs CPU (about 3 us per KV key), so they are paced like Consul's.
      snapshotEntries: o.raftSnapshot?.threshold ?? 16_384,
      snapshotIntervalMs: o.raftSnapshot?.intervalMs ?? 120_000,
      ...(o.metrics ? { metrics: o.metrics } : {}),
    });
    replicated.attach(consensus);
    const raftLog = logger.named("raft");
    /** Server versions (build tags) by Raft ID, from the LAN pool's members. */
    let serverVersions = new Map<string, string>();
    const readAutopilotConfig = () => autopilotConfigGet(replicated.store, new WatchSet()).value;
    const autopilot = autopilotRoutine({
      nodeId,
      seed: { ...AUTOPILOT_DEFAULTS, ...o.autopilot },
      readConfig: readAutopilotConfig,
      proposeDuty: dutyProposer((cmd) => consensus.propose(encodeCommand(cmd)), logger.named("autopilot")),
      consensus,
      addressOf: (id) => directory.lookup(id)?.address ?? "",
      gossip: (id): GossipServer | undefined => {
        const seen = directory.seen().find((x) => x.id === id);
        return seen && seen.status !== "left" ? { name: seen.name, status: seen.status, version: serverVersions.get(id) ?? "" } : undefined;
      },
      clock,
      logger: logger.named("autopilot"),
      ...(o.metrics ? { metrics: { healthy: o.metrics.gauge("autopilot.healthy"), failureTolerance: o.metrics.gauge("autopilot.failure_tolerance") } } : {}),
    });
    /** The LAN pool's members as last fed in (updateMembers); the StateCaller once the RPC layer is up. */
    let lanMembers: readonly PoolMember[] = [];
    let stateForLeader: StateCaller | undefined;
    const federation = federationRoutines({
      localDc: o.datacenter,
      primaryDc: o.primaryDatacenter || o.datacenter,
      store: replicated.store,
      barrier: () => consensus.read(),
      state: () => stateForLeader,
      servers: (dc) => gatedServers(dc === o.datacenter ? lanMembers : (o.wanMembers?.() ?? []), dc),
      knownDatacenters: () => o.datacenters(),
      onReplicationResult: o.onReplicationResult,
      ...(o.metrics ? { metrics: o.metrics } : {}),
      clock,
      rng: cryptoRng(),
      logger: logger.named("federation-state"),
    });
    const raftMembership = raftMembershipRoutine({ nodeId, consensus, directory, clock, logger: raftLog, autopilot: { readConfig: readAutopilotConfig, serverHealth: autopilot.serverHealth } });
    const secondaryCa = o.connectEnabled && o.primaryDatacenter && o.primaryDatacenter !== o.datacenter
      ? [secondaryCaRoutine({ ca: replicated.ca, primaryDc: o.primaryDatacenter, state: () => stateForLeader, clock, logger: logger.named("connect-ca") })]
      : [];
    const acl = o.acl;
    if (acl && o.primaryDatacenter && o.primaryDatacenter !== o.datacenter) {
      aclReplication = aclReplicationOver({
        state: () => stateForLeader, store: replicated.store, primaryDc: o.primaryDatacenter, tokenReplication: acl.enableTokenReplication ?? false,
        enabled: () => acl.replicationToken() !== "", clock, rng: cryptoRng(), logger: logger.named("acl-replication"),
      });
    }
    const leader = createLeaderRunner(
      [...replicated.leaderRoutines, ...secondaryCa, autopilot, raftMembership, ...federation.routines, ...(aclReplication ? [aclReplication] : [])],
      logger.named("leader"),
    );
    consensus.onLeaderChange((leaderId) => leader.setLeader(leaderId === nodeId));
    // Consul's Snapshot.Restore: after a restore the leader's duties start over on the new state (its
    // sessions, tombstones, members; a CA the restored state lacks is created again).
    replicated.onRestored(() => {
      if (!leader.leader) return;
      clock.setTimer(0, () => {
        if (!leader.leader) return;
        leader.setLeader(false);
        leader.setLeader(true);
      });
    });
    await consensus.start();
    cleanups.push(() => consensus.stop());
    replicated.coordinates.start();
    cleanups.push(() => replicated.coordinates.stop());
    cleanups.push(() => leader.setLeader(false));

    const rpcRng = cryptoRng();
    const pool = createRpcPool({
      dial: (target: RpcTarget) => {
        const candidates = target.datacenter === o.datacenter ? directory.all() : o.remoteServers(target.datacenter);
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
    const rpcMetrics = new RpcMetrics(o.metrics);
    const ctx: RpcContext = {
      datacenter: o.datacenter,
      node: o.nodeName,
      raft: consensus,
      servers: directory,
      pool,
      datacenters: () => o.datacenters(),
      ...(o.datacenterMaps ? { datacenterMaps: () => o.datacenterMaps!() } : {}),
      autopilot,
      holdForLeader: () => holdForLeader(() => consensus.status().leader !== "", clock, cryptoRng()),
      metrics: rpcMetrics,
      ...(replicated.aclCheck ? { requireOperator: (token: string, access: "read" | "write") => replicated.aclCheck!(token, "operator", access) } : {}),
    };
    const stateCaller = createServerStateCaller(ctx, replicated.backend);
    ownCaller = stateCaller;
    // Leader routines call other datacenters (federation-state replication and anti-entropy toward the
    // primary) with the replication token, as Consul's do; calls in this datacenter stay the server's own.
    stateForLeader = o.acl ? crossDcToken(stateCaller, o.datacenter, o.acl.replicationToken) : stateCaller;
    const routes = (r: ConnectRouter) => {
      registerStatusServices(r, ctx, { node: consensus, clock });
      registerStateService(r, stateCaller);
    };
    const grpc = createGrpcServer({ routes, interceptors: [rpcMetrics.interceptor], logger: logger.named("rpc") });
    // This server's own calls (the local HTTP API) go to the same services in process.
    const inProcess = createRouterTransport(routes);
    cleanups.push(() => grpc.close());
    if (o.metrics) cleanups.push(recordUsageMetrics(replicated.store, o.metrics, clock));
    for (const protocol of ["rpc", "multiplexed-rpc", "grpc"] as const) port.serve(protocol, (s) => grpc.acceptSocket(s));

    const askPeers = async (node: string): Promise<PeersAnswer> => {
      try {
        const r = await createClient(Status, pool.transport({ datacenter: o.datacenter, node })).peers({}, { timeoutMs: 5000 });
        return r.addresses.length > 0 ? "has-cluster" : "empty";
      } catch {
        return "unreachable";
      }
    };
    const bootstrapper = createBootstrapper({ expect: o.bootstrapExpect, nodeId, directory, consensus, askPeers, logger: raftLog, bootstrapped: o.bootstrap });
    const stopBootstrapChecks = clock.setInterval(1000, () => void bootstrapper.check());
    cleanups.push(() => stopBootstrapChecks());

    return {
      address: `${listener.host}:${listener.port}`,
      port: listener.port,
      consensus,
      state: stateCaller,
      rpc: () => inProcess,
      retireRemoteConnections: () => pool.retire((t) => t.datacenter !== o.datacenter),
      async stepDown(timeoutMs = 5_000) {
        if (consensus.status().role !== "Leader" || consensus.status().config.voters.length < 2) return;
        raftLog.info("leaving: transferring leadership");
        try {
          const to = await transferLeadership(consensus, { node: consensus, clock, timeoutMs }, "");
          raftLog.info("leaving: leadership transferred", { to });
        } catch (err) {
          raftLog.warn("leadership transfer did not complete before leaving", { error: (err as Error).message });
        }
      },
      updateMembers(members) {
        const versions = new Map<string, string>();
        for (const m of members) {
          const server = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
          if (server && server.datacenter === o.datacenter && server.id) versions.set(server.id, server.build);
        }
        serverVersions = versions;
        lanMembers = members;
        void replicated.members.update(members);
      },
      raft: {
        leader: () => {
          const id = consensus.status().leader;
          return id ? (directory.lookup(id)?.address ?? "") : "";
        },
        peers: () => consensus.status().config.voters.map((id) => directory.lookup(id)?.address ?? "").filter((a) => a !== ""),
      },
      updateServers(next) {
        directory.update(next, clock.monotonic());
        void bootstrapper.check();
        raftMembership.kick();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** `caller` with `token()` on the calls to datacenters other than `localDc` that carry none of their own. */
export function crossDcToken(caller: StateCaller, localDc: string, token: () => string): StateCaller {
  const remote = (dc: string | undefined) => dc !== undefined && dc !== "" && dc !== localDc;
  return {
    ...caller,
    apply: (command, datacenter, own) => caller.apply(command, datacenter, own ?? (remote(datacenter) ? token() : undefined)),
    query: (q, options = {}) => caller.query(q, options.token === undefined && remote(options.datacenter) ? { ...options, token: token() } : options),
    signIntermediate: (csr, datacenter, own) => caller.signIntermediate(csr, datacenter, own ?? (remote(datacenter) ? token() : undefined)),
  };
}
