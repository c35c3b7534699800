/**
 * The agent process: builds every part from the runtime config and wires them together.
 * This is the composition root of `causeway agent`; nothing below src/main knows all the parts.
 */
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { isIP } from "node:net";
import { lookup } from "node:dns/promises";
import { noPathMessage, socketConnection, type GatewayPick, type WanfedTransport } from "../federation/index.ts";
import { startGatewayLocator, type GatewayLocatorRuntime } from "./gateway_locator.ts";
import type { AgentInfo } from "../http/index.ts";
import { shutdownStack, type ShutdownStack } from "../lib/index.ts";
import type { Logger, LogLevelSetting, LogTaps } from "../platform/index.ts";
import {
  cryptoRng, dockerEngineClient, grpcHealthProbe, httpHealthProbe, readFileIfExists, spawnCheckProcess, systemClock, tcpHealthProbe, writeFileDurably,
} from "../platform/index.ts";
import { agentTokensOf } from "./agent_tokens.ts";
import { intentionDefaultAllow, resolvedTokenTtlMs } from "./acl_resolver.ts";
import type { RuntimeConfig } from "./config.ts";
import { serverStats, startServer, wanCoordinates, type RunningServer, type SeenServer } from "../server/index.ts";
import { startGossip } from "./gossip.ts";
import { startClientRpc } from "./client_rpc.ts";
import { createStateAccess } from "./state_access.ts";
import { connectCaApiOver } from "./connect_access.ts";
import { catalogPortOver } from "./catalog_port.ts";
import { debugConfig } from "./debug_config.ts";
import { startAgentMetrics } from "./metrics.ts";
import { agentTokenResolver, xdsStreamAuthorizer } from "./acl_resolver.ts";
import { startXds } from "./xds.ts";
import { createCoordinateSender, createLocalAgent } from "../agent/index.ts";
import { parseServer, serfStatsOf, type PoolMember } from "../membership/index.ts";
import { agentStateFiles } from "./agent_state_files.ts";
import { loadTlsFiles } from "./tls_files.ts";
import { runtimeDescription } from "./runtime.ts";
import { startAgentDns } from "./dns.ts";
import { startAgentHttp } from "./agent_http.ts";
import { createAgentReload } from "./agent_reload.ts";
import { REVISION, VERSION } from "./version.ts";
import type { FederationState, ReadQuery } from "../model/index.ts";
import { decodeWire, encodeWire } from "../rpc/index.ts";

export interface AgentAddresses {
  /** `host:port` of each listener that is enabled. */
  readonly http?: string;
  readonly grpc?: string;
  /** The DNS server's UDP address (TCP is on the same port unless 0 was asked for). */
  readonly dns?: string;
  readonly server?: string;
  /** Gossip addresses as advertised. */
  readonly serfLan?: string;
  readonly serfWan?: string;
}

export interface RunningAgent {
  readonly config: RuntimeConfig;
  readonly nodeId: string;
  readonly dataDir: string;
  readonly addresses: AgentAddresses;
  /** Stops every listener, then removes the data dir if it was a -dev temporary one. Idempotent. */
  shutdown(): Promise<void>;
  /** Reads the configuration again and applies what changes at run time (agent_reload.ts); rejects with the reason it failed. */
  reload(): Promise<void>;
}

export interface AgentHooks {
  readonly onLeft?: () => void;
  readonly logTaps?: LogTaps;
  /** Reads and builds the configuration again (for reload); absent: reload fails saying so. */
  readonly reread?: () => RuntimeConfig;
  /** The root logger's level, which a reload may change. */
  readonly logLevel?: LogLevelSetting;
}

/**
 * Starts an agent. Ports of 0 bind free ports (see `addresses`); -1 disables a listener.
 * On failure, whatever was started is stopped again before the error propagates.
 */
export async function startAgent(config: RuntimeConfig, logger: Logger, hooks: AgentHooks = {}): Promise<RunningAgent> {
  const cleanups = shutdownStack((err) => logger.warn("shutdown step failed", { error: err }));
  const stopAll = () => cleanups.stopAll();
  try {
    const metrics = startAgentMetrics(config.telemetry, systemClock());
    cleanups.push(() => metrics.stop());
    const dataDir = prepareDataDir(config, cleanups);
    const nodeId = loadNodeId(config, dataDir);
    const agentTokens = agentTokensOf(config, dataDir, logger.named("agent"));
    /** Told when this server's leader wrote the builtin ACL objects or the master token (acl.onInitialized). */
    const aclInitialized: (() => void)[] = [];
    const advertiseAddr = config.advertiseAddr || pickAdvertiseAddr(config.bindAddr);
    const addresses: { -readonly [K in keyof AgentAddresses]: AgentAddresses[K] } = {};

    let server: RunningServer | undefined;
    const tls = await loadTlsFiles(config);
    /** Servers know the datacenters from the WAN pool (set once gossip runs). */
    let knownDatacenters = (): readonly string[] => {
      throw new Error("The WAN pool is not running yet");
    };
    let remoteServers = (_dc: string): readonly { node: string; address: string }[] => [];
    let wanMembers = (): readonly PoolMember[] => [];
    let wanCoordinateMaps: (() => ReturnType<ReturnType<typeof wanCoordinates>["datacenterMaps"]>) | undefined;
    // WAN federation through mesh gateways: the gateway locator (started once the state can be read) picks
    // the gateway for RPC and WAN gossip to other datacenters; the WAN transport takes the tunnelled gossip.
    const wanfedOn = config.server && config.federation.meshGatewayWanFederation;
    const primaryDatacenter = config.primaryDatacenter || config.datacenter;
    let locator: GatewayLocatorRuntime | undefined;
    const pickGateway = (dc: string): GatewayPick => locator?.pick(dc) ?? { ok: false, datacenter: dc, reason: "not-populated", message: noPathMessage(dc) };
    let wanIngest: WanfedTransport | undefined;
    if (config.server && config.ports.server !== -1) {
      server = await startServer({
        nodeId,
        nodeName: config.nodeName,
        datacenter: config.datacenter,
        primaryDatacenter: config.primaryDatacenter || config.datacenter,
        wanMembers: () => wanMembers(),
        domain: config.domain,
        dataDir,
        bindAddr: config.bindAddr,
        port: config.ports.server,
        advertiseAddr,
        bootstrap: config.dev || config.bootstrapExpect === 1,
        bootstrapExpect: config.bootstrapExpect,
        tickMs: config.dev ? 50 : 100,
        raftSnapshot: { threshold: config.raftSnapshotThreshold, intervalMs: config.raftSnapshotIntervalMs },
        metrics: metrics.registry,
        ...(config.acl.enabled
          ? {
            acl: {
              masterToken: config.acl.tokens.master, defaultPolicy: config.acl.defaultPolicy, defaultToken: agentTokens.default,
              enableKeyListPolicy: config.acl.enableKeyListPolicy, replicationToken: agentTokens.replication,
              onInitialized: () => aclInitialized.forEach((f) => f()),
              tokenTtlMs: resolvedTokenTtlMs(config.acl), downPolicy: config.acl.downPolicy, enableTokenReplication: config.acl.enableTokenReplication,
            },
          }
          : {}),
        connectEnabled: config.connectEnabled,
        autopilot: config.autopilot,
        coordinateUpdate: { periodMs: config.coordinateUpdatePeriodMs, batchSize: config.coordinateUpdateBatchSize, maxBatches: config.coordinateUpdateMaxBatches },
        tls,
        clock: systemClock(),
        logger,
        datacenters: () => knownDatacenters(),
        datacenterMaps: () => {
          if (!wanCoordinateMaps) throw new Error("The WAN pool is not running yet");
          return wanCoordinateMaps();
        },
        remoteServers: (dc) => remoteServers(dc),
        ...(wanfedOn
          ? {
            viaGateway: pickGateway,
            wanGossip: {
              packet: (conn, remote) => (wanIngest ? wanIngest.acceptPacketConnection(socketConnection(conn), remote) : conn.destroy()),
              stream: (conn, remote) => (wanIngest ? wanIngest.acceptStreamConnection(socketConnection(conn), remote) : conn.destroy()),
            },
            onReplicationResult: (ok: boolean) => locator?.replicationResult(ok),
          }
          : {}),
      });
      cleanups.push(() => server!.close());
      addresses.server = server.address;
    }

    const gossip = await startGossip({
      config, logger, clock: systemClock(), nodeId, advertiseAddr, dataDir, serverPort: server?.port, metrics: metrics.registry,
      onLeft: () => hooks.onLeft?.(),
      ...(wanfedOn && tls ? { wanfed: { resolveGateway: pickGateway, tlsMaterial: tls.material, primaryDatacenter } } : {}),
    });
    wanIngest = gossip.wanfed;
    cleanups.push(async () => {
      // Like Consul's defaults (leave_on_terminate for clients): a client agent that is shut down leaves
      // the pool, so others record it as left rather than failed. Servers stay members: a server that
      // stops is expected back, and leaving would shrink the Raft quorum.
      if (!config.server) await gossip.lan.leave().catch((err) => logger.warn("leaving the LAN pool failed", { error: err }));
      await gossip.stop();
    });
    addresses.serfLan = gossip.lan.localAddr;
    const wan = gossip.wan;
    if (wan) {
      wanMembers = () => wan.members();
      addresses.serfWan = wan.localAddr;
      const wanView = wanCoordinates(config.datacenter, wan);
      knownDatacenters = () => wanView.datacenters();
      wanCoordinateMaps = () => wanView.datacenterMaps();
      remoteServers = (dc) =>
        wan.members().flatMap((m) => {
          const s = m.status === "alive" ? parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status }) : undefined;
          return s && s.datacenter === dc ? [{ node: s.shortName, address: s.rpcAddr }] : [];
        });
    }
    // A client agent reaches the servers of its datacenter, found in the LAN pool, over RPC.
    const clientRpc = server
      ? undefined
      : startClientRpc({
          datacenter: config.datacenter,
          dial: { datacenter: config.datacenter, domain: config.domain, tls: tls ? { material: tls.material, verifyOutgoing: tls.verifyOutgoing } : undefined },
          clock: systemClock(),
          rng: cryptoRng(),
          logger: logger.named("rpc-pool"),
          members: () => gossip.lan.members(),
        });
    if (clientRpc) cleanups.push(() => clientRpc.close());
    if (server) {
      // Servers of this datacenter, as the LAN pool shows them, drive Raft membership.
      const feed = () => {
        const members = gossip.lan.members();
        server!.updateServers(seenServers(members, config.datacenter));
        server!.updateMembers(members);
      };
      gossip.lan.subscribe(feed);
      feed();
    }

    const agentInfo: AgentInfo = {
      datacenter: config.datacenter,
      primaryDatacenter: config.primaryDatacenter,
      nodeName: config.nodeName,
      nodeId,
      server: config.server,
      version: VERSION,
      revision: REVISION,
      advertiseAddr,
      serfLanPort: config.ports.serfLan,
      serverPort: server ? server.port : config.ports.server,
      nodeMeta: config.nodeMeta,
      get debugConfig() {
        return debugConfig(config, { dataDir, nodeId, advertiseAddr, addresses });
      },
      stats: () => ({
        agent: { runtime: runtimeDescription() },
        build: { version: VERSION, revision: REVISION },
        serf_lan: serfStatsOf(gossip.lan.stats()),
        ...(gossip.wan ? { serf_wan: serfStatsOf(gossip.wan.stats()) } : {}),
        ...(server
          ? serverStats({
              status: server.consensus.status(),
              leaderAddr: server.raft.leader(),
              bootstrap: config.dev || config.bootstrapExpect === 1,
              knownDatacenters: (() => {
                try {
                  return knownDatacenters().length;
                } catch {
                  return 1; // no WAN pool: this datacenter only
                }
              })(),
            })
          : { consul: { acl: "disabled", known_servers: String(seenServers(gossip.lan.members(), config.datacenter).filter((x) => x.status === "alive").length), server: "false" } }),
      }),
    };
    // The replicated state as this agent reaches it, and the local agent that syncs into it.
    const stateCaller = server?.state ?? clientRpc?.state;
    const stateAccess = stateCaller ? createStateAccess(stateCaller, agentTokens.default) : undefined;
    /** With ACLs on: the tokens of requests and xDS streams, resolved by this agent (acl_resolver.ts). */
    const aclResolver = config.acl.enabled && stateAccess ? agentTokenResolver(config, stateAccess, agentTokens) : undefined;
    if (wanfedOn && stateAccess && server) {
      const serverState = server.state;
      const runningServer = server;
      const running = startGatewayLocator({
        metrics: metrics.registry,
        localDc: config.datacenter, primaryDc: primaryDatacenter, disablePrimaryGatewayFallback: config.federation.disablePrimaryGatewayFallback,
        primaryGateways: config.federation.primaryGateways, primaryGatewaysIntervalMs: config.federation.primaryGatewaysIntervalMs,
        // The server's own StateCaller (StateAccess.read takes no signal): close() cancels the read.
        readStates: async (minIndex, maxWaitMs, signal) => {
          const out = await serverState.query(encodeWire({ type: "federation-state-list" } satisfies ReadQuery), { consistency: "stale", minIndex, maxWaitMs, signal });
          return { states: decodeWire<FederationState[]>(out.result), index: out.index };
        },
        resolve: async (host) => (isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address)),
        clock: systemClock(), rng: cryptoRng(), logger: logger.named("federation"),
        onPathChange: () => {
          const rpc = runningServer.retireRemoteConnections();
          const gossipPackets = gossip.wanfed?.retireConnections() ?? 0;
          if (rpc + gossipPackets > 0) logger.named("federation").debug("federation: path changed; closed connections made the old way", { rpc, gossip_packets: gossipPackets });
        },
      });
      locator = running;
      cleanups.push(() => running.close());
      server.consensus.onLeaderChange((leaderId) => running.setLeader(leaderId === nodeId));
    }
    const connectCa = stateCaller && stateAccess ? connectCaApiOver(stateCaller, stateAccess, { clock: systemClock(), rng: cryptoRng(), logger: logger.named("leaf-cache"), datacenter: config.datacenter, defaultToken: agentTokens.default }) : undefined;
    if (connectCa) cleanups.push(() => connectCa.close());
    const wanAddr = config.gossip.advertiseAddrWan || advertiseAddr;
    // As in Consul, -dev keeps nothing across restarts.
    const stateFiles = config.dev ? undefined : agentStateFiles(dataDir, logger.named("agent"));
    const localAgent = stateAccess
      ? createLocalAgent({
          nodeName: config.nodeName,
          datacenter: config.datacenter,
          node: { nodeId, address: advertiseAddr, taggedAddresses: { lan: advertiseAddr, wan: wanAddr }, meta: config.nodeMeta },
          clock: systemClock(),
          rng: cryptoRng(),
          logger: logger.named("agent"),
          probes: {
            http: httpHealthProbe, tcp: tcpHealthProbe, grpc: grpcHealthProbe, process: spawnCheckProcess, docker: dockerEngineClient(),
            // Alias checks of other nodes: stale blocking reads, as Consul's CheckAlias asks the servers.
            nodeChecks: async (node, minIndex, maxWaitMs) => {
              const { value, meta } = await stateAccess.read({ type: "health-node-checks", node }, { datacenter: undefined, consistency: "stale", minIndex, maxWaitMs });
              return { index: meta.index, checks: value };
            },
          },
          enableScriptChecks: config.enableScriptChecks,
          enableLocalScriptChecks: config.enableLocalScriptChecks,
          sidecarPorts: { min: config.ports.sidecarMin, max: config.ports.sidecarMax },
          exposePorts: { min: config.ports.exposeMin, max: config.ports.exposeMax },
          catalog: catalogPortOver(stateAccess, agentTokens.agent),
          clusterSize: () => gossip.lan.members().length,
          // Service manager: central config (proxy-defaults, service-defaults) of proxies and gateways, read through the agent's one cache.
          ...(connectCa ? { centralConfig: { cache: connectCa.shared.cache, configEntry: connectCa.shared.configEntry } } : {}),
          ...(stateFiles ? { persistence: stateFiles } : {}),
        })
      : undefined;
    if (stateAccess && !config.disableCoordinates) {
      // Consul's sendCoordinate: the LAN coordinate to the catalog, at a rate scaled by the cluster size.
      const sender = createCoordinateSender({
        clock: systemClock(),
        rng: cryptoRng(),
        logger: logger.named("agent"),
        nodeName: config.nodeName,
        memberCount: () => gossip.lan.members().length,
        localCoordinate: () => gossip.lan.coordinate(),
        send: async (update) => {
          const r = await stateAccess.write({ type: "coordinate-batch", updates: [update] }, undefined, agentTokens.agent() || undefined);
          if (r.type === "error") throw new Error(r.error);
        },
        rateTarget: config.syncCoordinateRateTarget,
        intervalMinMs: config.syncCoordinateIntervalMinMs,
      });
      sender.start();
      cleanups.push(() => sender.stop());
    }
    if (localAgent) {
      // Services and checks from the config files, registered as if through the HTTP API (not persisted:
      // the files are read again at every start); then what the previous run registered through the API.
      const { services: svcDefs, checks: checkDefs, serviceTokens, checkTokens } = config.definitions;
      svcDefs.forEach((reg, i) => {
        for (const warning of localAgent.registerService(reg, { source: "config", token: serviceTokens?.[i] ?? "" })) logger.warn("service definition", { warning });
      });
      checkDefs.forEach((reg, i) => {
        for (const warning of localAgent.registerCheck(reg, { source: "config", token: checkTokens?.[i] ?? "" })) logger.warn("check definition", { warning });
      });
      if (stateFiles) for (const problem of localAgent.restore(stateFiles.load())) logger.warn("could not restore a persisted registration", { problem });
      localAgent.start();
      cleanups.push(() => localAgent.stop());
      // Consul's agent syncs in full when a server joins; a server also when a leader appears, since its
      // first sync may have run before one was elected.
      let knownServers = "";
      gossip.lan.subscribe(() => {
        const alive = seenServers(gossip.lan.members(), config.datacenter).filter((x) => x.status === "alive").map((x) => x.id).sort().join(",");
        if (alive !== knownServers) {
          knownServers = alive;
          localAgent.antiEntropy.triggerFullSync();
        }
      });
      // With ACLs: a first sync may have been refused because the master token was not written yet.
      aclInitialized.push(() => localAgent.antiEntropy.triggerFullSync());
      server?.consensus.onLeaderChange((leader) => {
        if (leader) localAgent.antiEntropy.triggerFullSync();
      });
    }
    if (config.ports.grpc !== -1 && localAgent && stateAccess && connectCa) {
      // Envoy's ADS on the gRPC port: proxycfg over the agent cache, for the local connect proxies.
      const xds = await startXds({
        metrics: metrics.registry,
        ...(aclResolver && localAgent ? { authorize: xdsStreamAuthorizer(aclResolver, () => localAgent.agentServices()) } : {}),
        datacenter: config.datacenter,
        nodeName: config.nodeName,
        domain: config.domain,
        advertiseAddr,
        intentionDefaultAllow: intentionDefaultAllow(config),
        host: config.clientAddr,
        port: config.ports.grpc,
        updatesPerSecond: config.xds.updateMaxPerSecond,
        proxylessClients: config.xds.proxylessClients,
        ...(tls ? { tls: { material: tls.material, verifyIncoming: config.tls.verifyIncoming } } : {}),
        localAgent,
        state: stateAccess,
        connect: connectCa.shared,
        datacenters: () => {
          if (clientRpc) return clientRpc.datacenters();
          try {
            return knownDatacenters();
          } catch {
            return [config.datacenter]; // no WAN pool: this datacenter only
          }
        },
        clock: systemClock(),
        logger: logger.named("xds"),
      });
      cleanups.push(() => xds.close());
      addresses.grpc = xds.address;
    }
    // Every known datacenter, nearest first: the WAN pool on a server, a server's answer on a client.
    const datacenters = () => (clientRpc ? clientRpc.datacenters() : knownDatacenters());
    const reread = hooks.reread;
    const reload = reread
      ? createAgentReload({ initial: config, reread, localAgent, agentTokens, ...(hooks.logLevel ? { logLevel: hooks.logLevel } : {}), logger: logger.named("agent") })
      : () => Promise.reject(new Error("This agent cannot reload its configuration"));
    if (config.ports.http !== -1) {
      const http = await startAgentHttp({
        config, logger, agentInfo, server, clientRpc, gossip, datacenters,
        // Consul's client agents forward Coordinate.ListDatacenters to a server; so do ours.
        wanCoordinateMaps: clientRpc ? () => clientRpc.datacenterMaps() : wanCoordinateMaps,
        stateAccess, connectCa, localAgent, agentTokens, aclResolver,
        metrics, logTaps: hooks.logTaps, reload,
      });
      cleanups.push(() => http.close());
      addresses.http = `${http.host}:${http.port}`;
    }

    if (config.ports.dns !== -1 && stateAccess) {
      const dns = await startAgentDns({ config, state: stateAccess, datacenters: () => Promise.resolve(datacenters()), clock: systemClock(), rng: cryptoRng(), logger: logger.named("dns"), metrics: metrics.registry });
      cleanups.push(() => dns.close());
      addresses.dns = `${dns.host}:${dns.udpPort}`;
    }

    logger.info("agent started", {
      node: config.nodeName,
      datacenter: config.datacenter,
      server: config.server,
      http: addresses.http,
      grpc: addresses.grpc,
      dns: addresses.dns,
      server_port: addresses.server,
      data_dir: dataDir,
    });
    let stopped: Promise<void> | undefined;
    return {
      config,
      nodeId,
      dataDir,
      addresses,
      shutdown: () => (stopped ??= stopAll().then(() => logger.info("agent stopped"))),
      reload,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function prepareDataDir(config: RuntimeConfig, cleanups: ShutdownStack): string {
  if (config.dev && !config.dataDir) {
    const dir = mkdtempSync(join(tmpdir(), "causeway-dev-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  mkdirSync(config.dataDir, { recursive: true });
  return config.dataDir;
}

/** Consul keeps the node ID in `<data_dir>/node-id`, created once and reused across restarts. */
function loadNodeId(config: RuntimeConfig, dataDir: string): string {
  if (config.nodeId) return config.nodeId.toLowerCase();
  const path = join(dataDir, "node-id");
  const existing = readFileIfExists(path);
  if (existing) {
    const id = new TextDecoder().decode(existing).trim();
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) return id;
    throw new Error(`${path} holds "${id}", which is not a node ID (UUID); fix or remove the file`);
  }
  const id = crypto.randomUUID();
  writeFileDurably(path, id);
  return id;
}

/** Like Consul: a bind address of 0.0.0.0 advertises the host's first private IPv4 address. */
function pickAdvertiseAddr(bindAddr: string): string {
  if (bindAddr !== "0.0.0.0") return bindAddr;
  const candidates = Object.values(networkInterfaces()).flat().filter((i) => i && i.family === "IPv4" && !i.internal);
  const isPrivate = (a: string) => /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.)/.test(a);
  return (candidates.find((i) => isPrivate(i!.address)) ?? candidates[0])?.address ?? "127.0.0.1";
}

/** The effective configuration, with the ports actually bound where 0 asked for a free one. */

/** This datacenter's servers among the LAN pool's members (Consul's metadata.IsConsulServer). */
function seenServers(members: readonly PoolMember[], datacenter: string): SeenServer[] {
  const out: SeenServer[] = [];
  for (const m of members) {
    const info = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
    if (!info || info.datacenter !== datacenter) continue;
    out.push({ id: info.id, name: info.shortName, rpcAddr: info.rpcAddr, expect: info.expect, status: m.status });
  }
  return out;
}
