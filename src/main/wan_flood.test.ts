import { describe, expect, test } from "bun:test";
import { clientTags, serverTags, type GossipPool, type PoolMember, type SerfEvent } from "../membership/index.ts";
import { silentLogger } from "../platform/index.ts";
import { flushMacrotask, simClock } from "../../test/harness/sim_clock.ts";
import { FLOOD_INTERVAL_MS, floodJoinTargets, startWanFlood } from "./wan_flood.ts";

const server = (name: string, dc: string, addr: string, o: { wanJoinPort?: number; status?: PoolMember["status"] } = {}): PoolMember => ({
  name, addr, port: 8301, status: o.status ?? "alive",
  tags: serverTags({ datacenter: dc, nodeId: `id-${name}`, port: 8300, build: "1.8.0", bootstrap: false, bootstrapExpect: 3, wanJoinPort: o.wanJoinPort ?? 8302 }),
});
const wanServer = (node: string, dc: string, addr: string, status: PoolMember["status"] = "alive") => ({ ...server(node, dc, addr, { status }), name: `${node}.${dc}`, port: 8302 });
const client = (name: string, addr: string): PoolMember => ({ name, addr, port: 8301, status: "alive", tags: clientTags({ datacenter: "dc1", nodeId: "id-c", build: "1.8.0" }) });

describe("floodJoinTargets", () => {
  test("alive LAN servers of this datacenter missing from the WAN pool, by name/LAN host:wan_join_port", () => {
    const lan = [
      server("s1", "dc1", "10.0.0.1"), server("s2", "dc1", "10.0.0.2"), server("s3", "dc1", "10.0.0.3", { wanJoinPort: 9302 }),
      server("s4", "dc1", "10.0.0.4", { status: "failed" }), client("c1", "10.0.0.9"), server("s5", "dc1", "fd00::5"), server("s6", "dc1", "10.0.0.6", { wanJoinPort: 0 }),
    ];
    const wan = [wanServer("s1", "dc1", "10.0.0.1"), wanServer("s2", "dc2", "10.9.0.2")];
    expect(floodJoinTargets("dc1", lan, wan)).toEqual(["s2.dc1/10.0.0.2:8302", "s3.dc1/10.0.0.3:9302", "s5.dc1/[fd00::5]:8302", "s6.dc1/10.0.0.6"]);
  });

  test("never this node itself, even before its WAN pool lists it", () => {
    expect(floodJoinTargets("dc1", [server("s1", "dc1", "10.0.0.1"), server("s2", "dc1", "10.0.0.2")], [], "s1")).toEqual(["s2.dc1/10.0.0.2:8302"]);
  });

  test("a server known to the WAN pool in any state is left to the WAN pool (Consul indexes all members)", () => {
    expect(floodJoinTargets("dc1", [server("s1", "dc1", "10.0.0.1")], [wanServer("s1", "dc1", "10.0.0.1", "failed")])).toEqual([]);
  });
});

/** A pool whose members and joins the test controls. */
function fakePool(members: PoolMember[]) {
  const subscribers: ((e: SerfEvent) => void)[] = [];
  const joins: string[] = [];
  const pool = {
    members: () => members,
    subscribe: (fn: (e: SerfEvent) => void) => {
      subscribers.push(fn);
      return () => void subscribers.splice(subscribers.indexOf(fn), 1);
    },
    join: async (addrs: readonly string[]) => {
      joins.push(...addrs);
      if (addrs.some((a) => a.startsWith("bad"))) throw new Error("no member reached");
      return 1;
    },
  } as unknown as GossipPool;
  const emit = (e: SerfEvent) => subscribers.forEach((f) => f(e));
  return { pool, joins, emit, members, subscribers };
}

describe("startWanFlood", () => {
  test("floods at start, on LAN joins and every minute, and stops cleanly", async () => {
    const clock = simClock();
    const lan = fakePool([server("s1", "dc1", "10.0.0.1")]);
    const wan = fakePool([wanServer("s1", "dc1", "10.0.0.1")]);
    const stop = startWanFlood({ lan: lan.pool, wan: wan.pool, localDc: "dc1", clock, logger: silentLogger() });
    clock.advance(0);
    await flushMacrotask();
    expect(wan.joins).toEqual([]);
    // A second server joins the LAN: it is flooded into the WAN at once.
    const s2 = server("s2", "dc1", "10.0.0.2");
    lan.members.push(s2);
    lan.emit({ type: "member-join", member: { ...s2, addr: s2.addr } } as unknown as SerfEvent);
    clock.advance(0);
    await flushMacrotask();
    expect(wan.joins).toEqual(["s2.dc1/10.0.0.2:8302"]);
    // Not yet a WAN member (the join is still gossiping): the periodic flood tries again.
    clock.advance(FLOOD_INTERVAL_MS);
    await flushMacrotask();
    expect(wan.joins).toEqual(["s2.dc1/10.0.0.2:8302", "s2.dc1/10.0.0.2:8302"]);
    wan.members.push(wanServer("s2", "dc1", "10.0.0.2"));
    clock.advance(FLOOD_INTERVAL_MS);
    await flushMacrotask();
    expect(wan.joins.length).toBe(2);
    stop();
    expect([clock.pending(), lan.subscribers.length]).toEqual([0, 0]);
  });
});
