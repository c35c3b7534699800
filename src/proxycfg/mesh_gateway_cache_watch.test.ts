/**
 * A WAN federation gateway's two extra watches as the agent cache serves them (cache_watch.ts): the
 * federation states' gateways from their own cache type, the local servers from the health type (service
 * "consul" in this datacenter, not Connect, any health), each value delivered as the machine's update.
 */
import { describe, expect, test } from "bun:test";
import type { CacheType } from "../agent/index.ts";
import { watchMeshGatewayInCache, type MeshGatewayCacheTypes } from "./cache_watch.ts";
import { fakeCache, flush } from "./manager_kit.test.ts";
import { meshGatewayWatchIds as ids, type MeshGatewayUpdate } from "./mesh_gateway_watches.ts";
import { node } from "./sidecar_state_kit.test.ts";

const types = Object.fromEntries(
  (["roots", "configEntry", "health", "meshGateways", "catalogServices", "configEntries", "datacenters", "federationGateways"] as const)
    .map((k) => [k, { name: k } as unknown as CacheType<unknown, unknown>]),
) as unknown as MeshGatewayCacheTypes;

describe("mesh gateway cache watches for WAN federation", () => {
  test("federation-gateways: the federation-state gateways type, datacenter -> gateways", async () => {
    const { cache, answer, watching } = fakeCache();
    const got: MeshGatewayUpdate[] = [];
    const cancel = watchMeshGatewayInCache(cache, types, ids.federationGateways, { kind: "federation-gateways" }, (u) => got.push(u), () => {});
    expect(watching()).toEqual(["federationGateways {}"]);
    const value = { dc2: [node("gw2", "mesh-gateway", "dc2")] };
    expect(answer("federationGateways", value)).toBe(1);
    await flush();
    expect(got).toEqual([{ kind: "federation-gateways", watchId: ids.federationGateways, value }]);
    cancel();
    expect(watching()).toEqual([]);
  });

  test("consul-servers: Health.ServiceNodes of service consul here, not Connect, not passing-only", async () => {
    const { cache, answer, watching } = fakeCache();
    const got: MeshGatewayUpdate[] = [];
    const errors: unknown[] = [];
    watchMeshGatewayInCache(cache, types, ids.consulServers, { kind: "consul-servers" }, (u) => got.push(u), (e) => errors.push(e));
    expect(watching()).toEqual(['health {"service":"consul","connect":false}']);
    const value = [node("s1", "consul")];
    answer("health", value);
    await flush();
    expect(got).toEqual([{ kind: "consul-servers", watchId: ids.consulServers, value }]);
    expect(errors).toEqual([]);
  });
});
