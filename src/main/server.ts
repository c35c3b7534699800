/**
 * The server half of an agent: the server port (one listener, many protocols), Raft over it with a
 * durable log in `<data_dir>/raft`, and the internal RPC services with their connection pool.
 *
 * Servers find each other through gossip (a later issue); until then a server knows only itself, so it
 * runs a cluster of one when bootstrapping (-dev, or bootstrap_expect = 1) and otherwise waits.
 */
import { join } from "node:path";
import {
  createConsensusNode, createTcpTransport, decodeMessage, encodeMessage, openLogStore, type ConsensusNode, type StateMachine,
} from "../consensus/index.ts";
import type { RaftStatus } from "../http/index.ts";
import {
  createGrpcServer, cryptoRng, listenTcp, nodeFileSystem, type Clock, type Logger, type TcpListener,
} from "../platform/index.ts";
import { createRpcPool, createServerPort, dialServer, registerStatusServices, type RpcContext, type RpcTarget, type ServerDialSettings } from "../rpc/index.ts";
import type { RuntimeConfig } from "./config.ts";
import type { LoadedTls } from "./tls_files.ts";

export interface RunningServer {
  /** The server port's `host:port` as bound. */
  readonly address: string;
  readonly raft: RaftStatus;
  readonly consensus: ConsensusNode<void>;
  close(): Promise<void>;
}

/**
 * The replicated state until the state store exists (issue 6): Raft runs, elects and replicates its own
 * no-op entries, and no command can be proposed yet, so applying one is a bug.
 */
const NO_COMMANDS_YET: StateMachine<void> = {
  apply(index) {
    throw new Error(`no replicated commands exist yet, but one was committed at index ${index}`);
  },
  snapshot: () => new Uint8Array(),
  restore() {},
};

interface ServerInfo {
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
}): Promise<RunningServer> {
  const { config, logger, clock, nodeId } = o;
  const cleanups: (() => unknown)[] = [];
  const close = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
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
    const consensus = createConsensusNode<void>({
      id: nodeId,
      clock,
      rng: cryptoRng(),
      logger: logger.named("raft"),
      log,
      transport,
      stateMachine: NO_COMMANDS_YET,
      bootstrapVoters: bootstrap ? [nodeId] : undefined,
      tickMs: config.dev ? 50 : 100,
    });
    await consensus.start();
    cleanups.push(() => consensus.stop());

    const pool = createRpcPool({
      dial: (target: RpcTarget) => {
        const found = [...servers.values()].find((s) => target.datacenter === config.datacenter && (!target.node || s.node === target.node));
        if (!found) return Promise.reject(new Error(`no server known for ${target.node ?? "any node"} in ${target.datacenter}`));
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
    };
    const grpc = createGrpcServer({ routes: (r) => registerStatusServices(r, ctx), logger: logger.named("rpc") });
    cleanups.push(() => grpc.close());
    for (const protocol of ["rpc", "multiplexed-rpc", "grpc"] as const) port.serve(protocol, (s) => grpc.acceptSocket(s));

    return {
      address: `${listener.host}:${listener.port}`,
      consensus,
      raft: {
        leader: () => {
          const id = consensus.status().leader;
          return id ? (servers.get(id)?.address ?? "") : "";
        },
        peers: () => consensus.status().config.voters.map((id) => servers.get(id)?.address ?? "").filter((a) => a !== ""),
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
