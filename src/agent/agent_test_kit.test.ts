import { simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { createLocalAgent, type LocalAgent, type LocalAgentOptions } from "./agent.ts";
import { createMemoryCatalog, type MemoryCatalog } from "./memory_catalog.ts";
import type { HttpProbe, TcpProbe } from "./ports.ts";

// Shared helpers for the agent's tests. Named *.test.ts so that it may use runtime globals; it has no tests itself.

export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Advances simulated time timer by timer, letting promise callbacks run between timers as real time would. */
export async function run(clock: SimClock, ms: number): Promise<void> {
  const end = clock.monotonic() + ms;
  for (;;) {
    await flush();
    const next = clock.nextAt();
    if (next === undefined || next > end) break;
    clock.advance(next - clock.monotonic());
  }
  clock.advance(end - clock.monotonic());
  await flush();
}

export interface Kit {
  readonly clock: SimClock;
  readonly catalog: MemoryCatalog;
  readonly agent: LocalAgent;
  readonly logs: string[];
  httpProbe: HttpProbe;
  tcpProbe: TcpProbe;
}

export function kit(overrides: Partial<LocalAgentOptions> = {}, seed = 1): Kit {
  const clock = simClock();
  const catalog = createMemoryCatalog();
  const logger = memoryLogger("debug");
  const k: Kit = {
    clock, catalog, logs: logger.lines,
    httpProbe: async () => ({ status: 200, statusText: "OK", body: "" }),
    tcpProbe: async () => {},
    agent: undefined as unknown as LocalAgent,
  };
  (k as { agent: LocalAgent }).agent = createLocalAgent({
    nodeName: "node-1", datacenter: "dc1",
    node: { nodeId: "11111111-2222-3333-4444-555555555555", address: "10.0.0.1", taggedAddresses: { lan: "10.0.0.1" }, meta: { rack: "a" } },
    clock, rng: seededRng(seed), logger,
    probes: { http: (req) => k.httpProbe(req), tcp: (addr, t) => k.tcpProbe(addr, t) },
    catalog, ...overrides,
  });
  return k;
}
