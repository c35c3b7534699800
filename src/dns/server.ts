/**
 * The DNS server (Consul's DNSServer): UDP and TCP on one address (default port 8600), each request
 * decoded strictly, answered by the resolver, or forwarded to the recursors in order (Consul's
 * handleRecurse: same transport, `recursorTimeoutMs` each; a reply with rcode other than NOERROR or
 * NXDOMAIN, a timeout or an error tries the next; all failing answers SERVFAIL). Undecodable input is
 * dropped (a UDP datagram) or closes the connection (TCP), and is logged at debug with the peer.
 */
import type * as net from "node:net";
import { bindUdp, listenTcp, type Clock, type Logger, type UdpEndpoint, type TcpListener } from "../platform/index.ts";
import type { DnsConfig } from "./config.ts";
import { createRecursors } from "./recursors.ts";
import { frameTcp, tcpMessages } from "./tcp_framing.ts";
import type { DnsResolver } from "./resolver.ts";
import { decodeMessage, DnsRcode, DnsType, DnsWireError, encodeMessage, type DnsMessage } from "./wire.ts";

export interface DnsServerStats {
  /** Requests decoded (UDP and TCP). */
  readonly queries: number;
  /** Datagrams or TCP messages that did not decode: dropped without an answer. */
  readonly malformed: number;
  /** Requests forwarded to the recursors, and those all recursors failed. */
  readonly recursed: number;
  readonly recursionFailures: number;
}

export interface DnsServer {
  readonly host: string;
  readonly udpPort: number;
  readonly tcpPort: number;
  stats(): DnsServerStats;
  close(): Promise<void>;
}

export interface DnsServerOptions {
  readonly host: string;
  /** 0: any free port, the same for UDP and TCP. */
  readonly port: number;
  readonly resolver: DnsResolver;
  readonly config: Pick<DnsConfig, "recursors" | "recursorTimeoutMs" | "recursorStrategy">;
  readonly logger: Logger;
  /** Times recursor exchanges. */
  readonly clock: Clock;
  readonly shuffle?: <T>(xs: readonly T[]) => T[];
  /** Hears every answered request: "ptr" for reverse lookups, "domain" for the rest, and how long it took. */
  readonly onAnswered?: (kind: "domain" | "ptr", ms: number) => void;
  /** Hears every request that did not decode. */
  readonly onMalformed?: () => void;
}

const MAX_TCP_MESSAGE = 65535;

export async function startDnsServer(o: DnsServerOptions): Promise<DnsServer> {
  const log = o.logger;
  const recursors = createRecursors({ config: o.config, clock: o.clock, logger: log, shuffle: o.shuffle });
  const counts = { queries: 0, malformed: 0, recursed: 0, recursionFailures: 0 };

  /** The reply bytes for `bytes` from `peer`, or undefined to send nothing. */
  const handle = async (bytes: Uint8Array, transport: "udp" | "tcp", peer: string): Promise<Uint8Array | undefined> => {
    let req: DnsMessage;
    try {
      req = decodeMessage(bytes);
    } catch (err) {
      counts.malformed++;
      o.onMalformed?.();
      log.debug("dns: malformed request dropped", { peer, error: err instanceof DnsWireError ? err.message : String(err) });
      return undefined;
    }
    counts.queries++;
    const started = o.clock.monotonic();
    let answer: Awaited<ReturnType<DnsResolver["answer"]>>;
    try {
      answer = await o.resolver.answer(req, transport, peer.replace(/:\d+$/, "").replace(/^\[|\]$/g, ""));
    } catch (err) {
      // A bug, never the client's doing: answer SERVFAIL rather than leave the client waiting.
      log.error("dns: answering failed", { peer, question: req.questions[0]?.name ?? "", error: err });
      answer = { kind: "reply", message: servfail(req, false) };
    }
    if (answer.kind === "drop") return undefined;
    const out = answer.kind === "reply" ? encodeMessage(answer.message) : await recurse(bytes, req, transport, peer);
    o.onAnswered?.(/\.arpa\.?$/i.test(req.questions[0]?.name ?? "") ? "ptr" : "domain", o.clock.monotonic() - started);
    return out;
  };

  const recurse = async (bytes: Uint8Array, req: DnsMessage, transport: "udp" | "tcp", peer: string): Promise<Uint8Array> => {
    counts.recursed++;
    const out = await recursors.exchange(bytes, transport);
    if (out) return out;
    counts.recursionFailures++;
    log.warn("dns: all recursors failed", { peer, question: req.questions[0]?.name ?? "" });
    return encodeMessage(servfail(req, true));
  };

  let udp: UdpEndpoint | undefined;
  let tcp: TcpListener | undefined;
  // UDP and TCP on one port; with port 0 the TCP side takes the port UDP got (retried if it is taken).
  for (let attempt = 0; tcp === undefined; attempt++) {
    const bound: UdpEndpoint = await bindUdp({
      host: o.host, port: o.port,
      onMessage: (data, from) => {
        void handle(data, "udp", `${from.address}:${from.port}`).then((out) => (out ? bound.send(out, from.port, from.address) : undefined))
          .catch((err: unknown) => log.debug("dns: udp reply failed", { peer: `${from.address}:${from.port}`, error: err }));
      },
    });
    udp = bound;
    try {
      tcp = await listenTcp({ host: o.host, port: bound.port, onConnection: (s) => serveTcp(s, handle, log) });
    } catch (err) {
      await bound.close();
      if (o.port !== 0 || attempt >= 4) throw err;
    }
  }
  const listener = tcp;
  const endpoint = udp!;
  return {
    host: o.host, udpPort: endpoint.port, tcpPort: listener.port,
    stats: () => ({ ...counts }),
    async close() {
      await endpoint.close();
      await listener.close();
    },
  };
}

/** SERVFAIL for `req`: its question, its OPT echoed, RA as given. */
function servfail(req: DnsMessage, ra: boolean): DnsMessage {
  return {
    id: req.id, flags: { qr: true, opcode: req.flags.opcode, aa: false, tc: false, rd: req.flags.rd, ra, rcode: DnsRcode.SERVFAIL },
    questions: req.questions, answers: [], authority: [], additional: req.additional.filter((x) => x.type === DnsType.OPT),
  };
}

/** RFC 1035 4.2.2: each message on a TCP connection has a two-byte length prefix; many may follow. */
function serveTcp(socket: net.Socket, handle: (b: Uint8Array, t: "tcp", peer: string) => Promise<Uint8Array | undefined>, log: Logger): void {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  socket.setTimeout(10_000, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.on("data", tcpMessages((msg) => {
    void handle(msg, "tcp", peer).then((out) => {
      if (!out) return void socket.destroy();
      if (out.length > MAX_TCP_MESSAGE) return void log.warn("dns: reply too large for TCP", { peer, bytes: out.length });
      socket.write(frameTcp(out));
    }).catch((err: unknown) => {
      log.debug("dns: tcp reply failed", { peer, error: err });
      socket.destroy();
    });
  }));
}
