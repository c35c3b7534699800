/**
 * The DNS benchmark's load: `clients` UDP sockets, each with one query outstanding at a time (a new
 * one as soon as the answer is in), for `ms`; latency per answered query, a query unanswered after
 * `timeoutMs` counts as lost. Every reply must decode and answer the query's ID.
 */
import { bindUdp, type UdpEndpoint } from "../../src/platform/index.ts";
import { decodeMessage, DnsType, encodeMessage } from "../../src/dns/index.ts";

export interface LoadResult {
  readonly qps: number;
  readonly p50: number;
  readonly p99: number;
  readonly answered: number;
  readonly lost: number;
  readonly badReplies: number;
}

export async function udpLoad(o: { port: number; name: string; type?: number; clients: number; ms: number; timeoutMs?: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  let lost = 0, badReplies = 0;
  const end = performance.now() + o.ms;
  const client = async (c: number) => {
    let pending: { id: number; sentAt: number; done: () => void } | undefined;
    const sock: UdpEndpoint = await bindUdp({
      host: "127.0.0.1", port: 0,
      onMessage: (data) => {
        let id = -1;
        try {
          const m = decodeMessage(data);
          id = m.id;
          if (m.answers.length === 0) badReplies++;
        } catch {
          badReplies++;
        }
        if (pending && id === pending.id) {
          latencies.push(performance.now() - pending.sentAt);
          pending.done();
        }
      },
    });
    let id = c * 1000;
    try {
      while (performance.now() < end) {
        id = (id + 1) & 0xffff;
        const query = encodeMessage({
          id, flags: { qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, rcode: 0 },
          questions: [{ name: o.name, type: o.type ?? DnsType.A, class: 1 }], answers: [], authority: [], additional: [],
        });
        const answered = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), o.timeoutMs ?? 1000);
          pending = { id, sentAt: performance.now(), done: () => (clearTimeout(timer), resolve(true)) };
          sock.send(query, o.port, "127.0.0.1").catch(() => (clearTimeout(timer), resolve(false)));
        });
        pending = undefined;
        if (!answered) lost++;
      }
    } finally {
      await sock.close();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { qps: (latencies.length / elapsed) * 1000, p50: at(0.5), p99: at(0.99), answered: latencies.length, lost, badReplies };
}
