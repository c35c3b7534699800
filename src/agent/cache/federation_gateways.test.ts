/**
 * The federation-state gateways cache type over a fake state reader: what it reads and where, the
 * datacenter map it keeps, and that a watch blocks on the read's index and reports each change.
 */
import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, ReadQuery } from "../../model/index.ts";
import { silentLogger } from "../../platform/index.ts";
import { simClock } from "../../../test/harness/sim_clock.ts";
import { createAgentCache, federationGatewaysType, type StateReader } from "./index.ts";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

const gw = (node: string, dc: string) =>
  ({ Node: { Node: node, Datacenter: dc }, Service: { ID: "mesh-gateway", Service: "mesh-gateway", Kind: "mesh-gateway" }, Checks: [] }) as unknown as CheckServiceNode;

/** A reader whose federation-state gateways change when `set` is called; a read past the index waits for it. */
function reader() {
  let index = 3;
  let value: Record<string, CheckServiceNode[]> = { dc1: [gw("a", "dc1")], dc2: [gw("b", "dc2")] };
  const waiting: Array<() => void> = [];
  const reads: { query: ReadQuery; datacenter: string | undefined; minIndex: number }[] = [];
  const r: StateReader = {
    async read(query, options) {
      reads.push({ query, datacenter: options.datacenter, minIndex: options.minIndex });
      if (query.type !== "federation-state-mesh-gateways") throw new Error(`unexpected read ${query.type}`);
      if (options.minIndex >= index) await new Promise<void>((resolve) => waiting.push(resolve));
      return { value: { DatacenterNodes: value } as never, meta: { index } };
    },
  };
  const set = (next: Record<string, CheckServiceNode[]>) => {
    value = next;
    index++;
    for (const w of waiting.splice(0)) w();
  };
  return { r, reads, set };
}

describe("federation-state gateways cache type", () => {
  test("reads the federation states' gateways in the asked datacenter and keeps datacenter -> gateways", async () => {
    const { r, reads } = reader();
    const c = createAgentCache({ clock: simClock(), rng: { next: () => 0.5 }, logger: silentLogger() });
    const type = federationGatewaysType(r);
    const got = await c.get(type, {});
    expect(Object.keys(got.value)).toEqual(["dc1", "dc2"]);
    expect(got.value["dc2"]!.map((n) => n.Node.Node)).toEqual(["b"]);
    expect(got.index).toBe(3);
    expect(reads[0]).toEqual({ query: { type: "federation-state-mesh-gateways" }, datacenter: undefined, minIndex: 0 });
    await c.get(type, { datacenter: "dc2" });
    expect(reads.at(-1)!.datacenter).toBe("dc2");
    expect(type.key({})).not.toBe(type.key({ datacenter: "dc2" }));
    c.close();
  });

  test("a watch blocks on the index and reports each new set of gateways", async () => {
    const { r, reads, set } = reader();
    const c = createAgentCache({ clock: simClock(), rng: { next: () => 0.5 }, logger: silentLogger() });
    const seen: string[][] = [];
    const cancel = c.watch(federationGatewaysType(r), {}, { onUpdate: (res) => seen.push(Object.keys(res.value)) });
    await flush();
    expect(seen).toEqual([["dc1", "dc2"]]);
    expect(reads.at(-1)!.minIndex).toBe(3); // blocking on the current index
    set({ dc1: [gw("a", "dc1")], dc2: [gw("b", "dc2")], dc3: [gw("c", "dc3")] });
    await flush();
    expect(seen).toEqual([["dc1", "dc2"], ["dc1", "dc2", "dc3"]]);
    cancel();
    c.close();
  });
});
