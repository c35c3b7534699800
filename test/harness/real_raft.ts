/**
 * A consensus node on the real platform: segment log store on the real disk, TCP transport on
 * loopback, the system clock and the test KV state machine. For end-to-end tests and benchmarks.
 */
import {
  createConsensusNode, createTcpTransport, decodeMessage, encodeMessage, openLogStore,
  type ConsensusNode, type DurableLogStore, type TcpTransport, type Transport,
} from "../../src/consensus/index.ts";
import { cryptoRng, dialTls, listenTcp, nodeFileSystem, seededRng, silentLogger, systemClock, type Logger, type TcpListener, type TlsMaterial } from "../../src/platform/index.ts";
import { ALPN, createServerPort, type ServerPort } from "../../src/rpc/index.ts";
import { kvStateMachine, type KvResult, type KvStateMachine } from "./kv_state_machine.ts";

export interface RealNode {
  readonly id: string;
  readonly node: ConsensusNode<KvResult>;
  readonly sm: KvStateMachine;
  readonly store: DurableLogStore;
  readonly port: number;
  /** Stops the node, closes its listener, transport and log. */
  close(): Promise<void>;
}

export interface RealNodeOptions {
  readonly id: string;
  readonly dir: string;
  /** Voters for a new cluster; omit when restarting or joining. */
  readonly bootstrap?: readonly string[];
  /** Where peers listen, consulted at every dial (so a restarted peer on a new port is found). */
  readonly peerPorts: ReadonlyMap<string, number>;
  readonly port?: number;
  readonly logger?: Logger;
  readonly tickMs?: number;
  /** Replaces the TCP transport (e.g. an in-process one for a single node). */
  readonly transport?: Transport;
  readonly snapshotEntries?: number;
  readonly keepEntries?: number;
  /**
   * With TLS material, Raft runs the way servers do: the listener is a server port, peers dial it with
   * native mutual TLS, ALPN causeway/raft and ServerName server.dc1.consul.
   */
  readonly tls?: TlsMaterial;
  /** Called with the server port (TLS mode only) so callers can serve more protocols on it. */
  readonly onServerPort?: (port: ServerPort) => void;
}

export async function startRealNode(o: RealNodeOptions): Promise<RealNode> {
  const logger = o.logger ?? silentLogger();
  const clock = systemClock();
  let tcp: TcpTransport | undefined;
  let listener: TcpListener | undefined;
  let transport = o.transport;
  if (!transport) {
    tcp = createTcpTransport({
      localId: o.id,
      codec: { encode: encodeMessage, decode: decodeMessage },
      logger: logger.named("transport"),
      clock,
      rng: seededRng(hashId(o.id)),
      resolve: (peer) => {
        const port = o.peerPorts.get(peer);
        return port === undefined ? undefined : { host: "127.0.0.1", port };
      },
      dial: o.tls
        ? async (peer) => {
            const port = o.peerPorts.get(peer);
            if (port === undefined) throw new Error(`unknown peer ${peer}`);
            return dialTls({ host: "127.0.0.1", port, ...o.tls!, servername: "server.dc1.consul", alpn: [ALPN.raft] });
          }
        : undefined,
    });
    if (o.tls) {
      const serverPort = createServerPort({ logger: logger.named("server-port"), clock, tls: { material: o.tls, verifyIncomingRpc: true } });
      serverPort.serve("raft", (s) => tcp!.accept(s));
      o.onServerPort?.(serverPort);
      listener = await listenTcp({ host: "127.0.0.1", port: o.port ?? 0, onConnection: (s) => serverPort.accept(s) });
    } else {
      listener = await listenTcp({ host: "127.0.0.1", port: o.port ?? 0, onConnection: (s) => tcp!.accept(s) });
    }
    transport = tcp;
  }
  const store = openLogStore({ fs: nodeFileSystem(), dir: o.dir, logger: logger.named("log") });
  const sm = kvStateMachine();
  const node = createConsensusNode<KvResult>({
    id: o.id,
    clock,
    rng: cryptoRng(),
    logger,
    log: store,
    transport,
    stateMachine: sm,
    bootstrapVoters: o.bootstrap,
    tickMs: o.tickMs ?? 20,
    electionTicks: 10,
    heartbeatTicks: 2,
    snapshotEntries: o.snapshotEntries,
    keepEntries: o.keepEntries,
  });
  await node.start();
  return {
    id: o.id,
    node,
    sm,
    store,
    port: listener?.port ?? 0,
    async close() {
      await node.stop();
      await listener?.close();
      await transport!.close();
      store.close();
    },
  };
}

function hashId(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** Resolves once `cond()` holds, polling every few milliseconds; rejects after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
