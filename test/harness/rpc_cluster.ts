/**
 * Servers with Raft and the internal RPC services on their server ports (native mutual TLS), for
 * end-to-end tests of the RPC layer: Status/Operator services, the pool, leader and datacenter forwarding.
 */
import type * as net from "node:net";
import type { Duplex } from "node:stream";
import { createClientHelloParser } from "../../src/gateway/index.ts";
import { createGrpcServer, dialTcp, listenTcp, seededRng, silentLogger, systemClock, type TlsMaterial } from "../../src/platform/index.ts";
import {
  createRpcPool, createServerStateCaller, dialServer, registerStateService, registerStatusServices,
  type RpcContext, type RpcDialer, type RpcPool, type RpcTarget, type StateBackend, type StateCaller,
} from "../../src/rpc/index.ts";
import { join } from "node:path";
import { startRealNode, waitFor, type RealNode } from "./real_raft.ts";

export interface ServerEntry {
  readonly id: string;
  readonly node: string;
  readonly datacenter: string;
  port: number;
}

/** Every server the tests know of, in every datacenter. */
export class Directory {
  readonly servers = new Map<string, ServerEntry>();
  find(target: RpcTarget): ServerEntry | undefined {
    for (const s of this.servers.values()) if (s.datacenter === target.datacenter && (!target.node || s.node === target.node)) return s;
    return undefined;
  }
}

export interface RpcServer {
  readonly real: RealNode;
  readonly pool: RpcPool;
  readonly entry: ServerEntry;
  /** The State service as this server's local HTTP API would use it (commands are test KV commands, queries are keys). */
  readonly state: StateCaller;
  /** Queries this server's State backend served itself (its own key reads). */
  readonly servedQueries: string[];
  /** Every target this server's pool dialled, in order. */
  readonly dialed: RpcTarget[];
  close(): Promise<void>;
}

/**
 * The production dialer (src/rpc/dialer.ts) over the test directory. With verify_outgoing every
 * connection is native TLS: ALPN h2 for RPC, ServerName `<node>.server.<dc>.consul` or
 * `server.<dc>.consul`.
 */
export function directDialer(directory: Directory, material: TlsMaterial, dialed?: RpcTarget[], localDatacenter = "dc1"): RpcDialer {
  return async (target): Promise<Duplex> => {
    dialed?.push(target);
    const s = directory.find(target);
    if (!s) throw new Error(`no server known for ${target.node ?? "*"} in ${target.datacenter}`);
    return dialServer({ datacenter: localDatacenter, domain: "consul", tls: { material, verifyOutgoing: true } }, `127.0.0.1:${s.port}`, target, "rpc");
  };
}

export async function startRpcServer(o: {
  id: string;
  datacenter: string;
  dir: string;
  bootstrap?: readonly string[];
  directory: Directory;
  material: TlsMaterial;
  /** Raft peers of this datacenter: id -> server port (shared, updated as servers start). */
  peerPorts: Map<string, number>;
}): Promise<RpcServer> {
  const clock = systemClock();
  const dialed: RpcTarget[] = [];
  const pool = createRpcPool({ dial: directDialer(o.directory, o.material, dialed, o.datacenter), clock, rng: seededRng(7), logger: silentLogger() });
  let real: RealNode | undefined;
  const ctx: RpcContext = {
    datacenter: o.datacenter,
    node: o.id,
    raft: { status: () => real!.node.status(), changeMembership: (cc) => real!.node.changeMembership(cc) },
    servers: {
      lookup: (raftId) => {
        const s = o.directory.servers.get(`${o.datacenter}/${raftId}`);
        return s ? { node: s.node, address: `127.0.0.1:${s.port}` } : undefined;
      },
    },
    pool,
  };
  const servedQueries: string[] = [];
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  /** The State service over the test KV state machine: a query is a key; its result is the value. */
  const backend: StateBackend = {
    apply: async (command) => enc.encode(JSON.stringify(await real!.node.propose(command))),
    query: async (query) => {
      const key = dec.decode(query);
      servedQueries.push(key);
      return { result: enc.encode(real!.sm.get(key) ?? ""), index: real!.sm.lastIndex() };
    },
    linearizableRead: () => real!.node.read(),
    renewSession: async (id) => enc.encode(id === "known" ? `renewed on ${o.id}` : ""),
    signLeaf: async () => {
      throw new Error("the test cluster has no CA");
    },
    setCAConfiguration: async () => {
      throw new Error("the test cluster has no CA");
    },
  };
  const state = createServerStateCaller(ctx, backend);
  const grpc = createGrpcServer({
    routes: (r) => {
      registerStatusServices(r, ctx);
      registerStateService(r, state);
    },
    logger: silentLogger(),
  });
  real = await startRealNode({
    id: o.id,
    dir: o.dir,
    bootstrap: o.bootstrap,
    peerPorts: o.peerPorts,
    tls: o.material,
    onServerPort: (sp) => {
      sp.serve("rpc", (s) => grpc.acceptSocket(s));
      sp.serve("multiplexed-rpc", (s) => grpc.acceptSocket(s));
      sp.serve("grpc", (s) => grpc.acceptSocket(s));
    },
  });
  o.peerPorts.set(o.id, real.port);
  const entry: ServerEntry = { id: o.id, node: o.id, datacenter: o.datacenter, port: real.port };
  o.directory.servers.set(`${o.datacenter}/${o.id}`, entry);
  return {
    real,
    pool,
    entry,
    dialed,
    state,
    servedQueries,
    async close() {
      pool.close();
      await grpc.close();
      await real!.close();
    },
  };
}

/**
 * Starts `ids` as one datacenter's servers bootstrapped together (data under `<work>/<dc>/<id>`),
 * appends them to `started` (for the caller's cleanup) and waits for a leader.
 */
export async function startRpcCluster(o: {
  work: string;
  dc: string;
  ids: readonly string[];
  material: TlsMaterial;
  directory: Directory;
  started: RpcServer[];
}): Promise<RpcServer[]> {
  const ports = new Map<string, number>();
  const out: RpcServer[] = [];
  for (const id of o.ids) {
    const s = await startRpcServer({ id, datacenter: o.dc, dir: join(o.work, o.dc, id), bootstrap: o.ids, directory: o.directory, material: o.material, peerPorts: ports });
    out.push(s);
    o.started.push(s);
  }
  await waitFor(() => out.some((s) => s.real.node.status().role === "Leader"), 10_000, `a leader in ${o.dc}`);
  return out;
}

/** A connection a FakeGateway saw: the ClientHello's SNI and offered ALPN, and the port it forwarded to. */
export interface GatewayPassage {
  readonly sni: string | undefined;
  readonly alpn: readonly string[];
  readonly forwardedTo: number | undefined;
}

export interface FakeGateway {
  /** "127.0.0.1:<port>", what a gateway locator would pick. */
  readonly address: string;
  /** Every connection, in order of their ClientHellos. */
  readonly passages: GatewayPassage[];
  close(): Promise<void>;
}

/**
 * A mesh gateway stand-in on loopback: reads each connection's TLS ClientHello (the built-in gateway's
 * parser), records SNI and ALPN, and relays the bytes, the ClientHello included, to the port `route`
 * names for that SNI; a connection `route` has no port for is closed. TLS passes through untouched,
 * as through a real gateway.
 */
export async function startFakeGateway(route: (sni: string | undefined) => number | undefined): Promise<FakeGateway> {
  const passages: GatewayPassage[] = [];
  const relay = (client: net.Socket) => {
    const parser = createClientHelloParser();
    const held: Buffer[] = [];
    client.on("error", () => {});
    const onData = (chunk: Buffer) => {
      held.push(chunk);
      const r = parser.feed(chunk);
      if (r.state === "more") return;
      client.off("data", onData);
      client.pause();
      const port = r.state === "done" ? route(r.serverName) : undefined;
      passages.push({ sni: r.state === "done" ? r.serverName : undefined, alpn: r.state === "done" ? r.alpn : [], forwardedTo: port });
      if (port === undefined) return void client.destroy();
      dialTcp({ host: "127.0.0.1", port }).then(
        (upstream) => {
          upstream.on("error", () => client.destroy());
          client.on("error", () => upstream.destroy());
          upstream.once("close", () => client.destroy());
          client.once("close", () => upstream.destroy());
          for (const b of held) upstream.write(b);
          client.pipe(upstream);
          upstream.pipe(client);
        },
        () => client.destroy(),
      );
    };
    client.on("data", onData);
  };
  const listener = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: relay });
  return { address: `127.0.0.1:${listener.port}`, passages, close: () => listener.close() };
}
