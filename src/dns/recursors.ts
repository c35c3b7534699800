/**
 * Asking the recursors (Consul's handleRecurse and resolveCNAME's upstream step): each in order
 * ("random": a fresh permutation per request), on the transport given, `timeoutMs` each; a reply with
 * rcode NOERROR or NXDOMAIN, or with TC set, is taken; an error, a timeout or another rcode tries the
 * next one.
 */
import { bindUdp, dialTcp, type Clock, type Logger } from "../platform/index.ts";
import { recursorAddress, type DnsConfig } from "./config.ts";
import { frameTcp, tcpMessages } from "./tcp_framing.ts";
import { decodeMessage, DnsRcode, DnsType, encodeMessage, type DnsRecord } from "./wire.ts";

export interface Recursors {
  /** How many are configured. */
  readonly count: number;
  /** The first acceptable reply to `request` (wire bytes), or undefined when every recursor failed. */
  exchange(request: Uint8Array, transport: "udp" | "tcp"): Promise<Uint8Array | undefined>;
  /** The CNAME, A and AAAA records the recursors answer for `name` (an A question over UDP); none on failure. */
  lookup(name: string): Promise<DnsRecord[]>;
}

export function createRecursors(o: {
  readonly config: Pick<DnsConfig, "recursors" | "recursorTimeoutMs" | "recursorStrategy">; readonly clock: Clock; readonly logger: Logger;
  readonly shuffle?: <T>(xs: readonly T[]) => T[];
}): Recursors {
  const addresses = o.config.recursors.map(recursorAddress);
  let nextId = 1;
  const exchange = async (request: Uint8Array, transport: "udp" | "tcp"): Promise<Uint8Array | undefined> => {
    const order = o.config.recursorStrategy === "random" && o.shuffle ? o.shuffle(addresses) : addresses;
    for (const r of order) {
      try {
        const out = transport === "udp" ? await exchangeUdp(r, request, o.config.recursorTimeoutMs, o.clock) : await exchangeTcp(r, request, o.config.recursorTimeoutMs, o.clock);
        const reply = decodeMessage(out);
        if (reply.flags.rcode === DnsRcode.NOERROR || reply.flags.rcode === DnsRcode.NXDOMAIN || reply.flags.tc) return out;
        o.logger.debug("dns: recursor answered with an error, trying the next", { recursor: r, rcode: reply.flags.rcode });
      } catch (err) {
        o.logger.debug("dns: recursor failed, trying the next", { recursor: r, error: err });
      }
    }
    return undefined;
  };
  return {
    count: addresses.length,
    exchange,
    async lookup(name) {
      if (addresses.length === 0) return [];
      nextId = (nextId + 1) & 0xffff;
      const out = await exchange(encodeMessage({
        id: nextId, flags: { qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, rcode: 0 },
        questions: [{ name, type: DnsType.A, class: 1 }], answers: [], authority: [], additional: [],
      }), "udp");
      if (!out) return [];
      try {
        return decodeMessage(out).answers.filter((r) => r.type === DnsType.CNAME || r.type === DnsType.A || r.type === DnsType.AAAA);
      } catch {
        return [];
      }
    },
  };
}

function splitHostPort(addr: string): [string, number] {
  const m = /^\[(.*)\]:(\d+)$/.exec(addr) ?? /^(.*):(\d+)$/.exec(addr);
  if (!m) throw new Error(`bad recursor address ${addr}`);
  return [m[1]!, Number(m[2])];
}

async function exchangeUdp(addr: string, bytes: Uint8Array, timeoutMs: number, clock: Clock): Promise<Uint8Array> {
  const [host, port] = splitHostPort(addr);
  let done!: (b: Uint8Array) => void;
  const got = new Promise<Uint8Array>((resolve) => (done = resolve));
  const sock = await bindUdp({ host: host.includes(":") ? "::" : "0.0.0.0", port: 0, onMessage: (data) => done(data) });
  try {
    await sock.send(bytes, port, host);
    return await withTimeout(got, timeoutMs, addr, clock);
  } finally {
    await sock.close();
  }
}

async function exchangeTcp(addr: string, bytes: Uint8Array, timeoutMs: number, clock: Clock): Promise<Uint8Array> {
  const [host, port] = splitHostPort(addr);
  const s = await dialTcp({ host, port, timeoutMs });
  try {
    const got = new Promise<Uint8Array>((resolve, reject) => {
      s.on("data", tcpMessages(resolve));
      s.on("error", reject);
      s.on("close", () => reject(new Error(`${addr} closed the connection`)));
    });
    s.write(frameTcp(bytes));
    return await withTimeout(got, timeoutMs, addr, clock);
  } finally {
    s.destroy();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string, clock: Clock): Promise<T> {
  let cancel = () => {};
  const timeout = new Promise<T>((_, reject) => (cancel = clock.setTimer(ms, () => reject(new Error(`${what}: no answer within ${ms} ms`)))));
  return Promise.race([p, timeout]).finally(() => cancel());
}
