import { describe, expect, test } from "bun:test";
import { isRfc3339, isSameFederationState, meshGatewaysByDatacenter, type FederationState } from "./federation_state.ts";
import { check, gateway, state } from "./federation_state_fixtures.test.ts";

describe("isSameFederationState", () => {
  test("ignores UpdatedAt, PrimaryModifyIndex and every Raft index", () => {
    const other = state({
      UpdatedAt: "2021-01-01T00:00:00Z", PrimaryModifyIndex: 1, CreateIndex: 2, ModifyIndex: 3,
      MeshGateways: [gateway({ CreateIndex: 99, ModifyIndex: 99 }, { CreateIndex: 99, ModifyIndex: 99 }, [check({ CreateIndex: 99, ModifyIndex: 99 })])],
    });
    expect(isSameFederationState(state(), other)).toBe(true);
  });

  test("nil and empty maps and lists compare equal; absent MeshGateways is none", () => {
    expect(isSameFederationState(state({ MeshGateways: [gateway({ Meta: {} })] }), state({ MeshGateways: [gateway({ Meta: null as never })] }))).toBe(true);
    expect(isSameFederationState(state({ MeshGateways: [gateway({}, { Tags: [] })] }), state())).toBe(true);
    expect(isSameFederationState(state({ MeshGateways: undefined }), state({ MeshGateways: [] }))).toBe(true);
  });

  test.each([
    ["another datacenter", state({ Datacenter: "dc3" })],
    ["the datacenter in another case", state({ Datacenter: "DC2" })],
    ["one more gateway", state({ MeshGateways: [gateway(), gateway({ Node: "gw-2" })] })],
    ["no gateways", state({ MeshGateways: undefined })],
    ["the node's ID", state({ MeshGateways: [gateway({ ID: "" })] })],
    ["the node's address", state({ MeshGateways: [gateway({ Address: "10.0.0.2" })] })],
    ["the node's datacenter", state({ MeshGateways: [gateway({ Datacenter: "dc1" })] })],
    ["the node's tagged WAN address", state({ MeshGateways: [gateway({ TaggedAddresses: { lan: "10.0.0.1", wan: "198.18.0.9" } })] })],
    ["the node's meta", state({ MeshGateways: [gateway({ Meta: { rack: "b" } })] })],
    ["the service's port", state({ MeshGateways: [gateway({}, { Port: 9443 })] })],
    ["the service's WAN address", state({ MeshGateways: [gateway({}, { TaggedAddresses: { wan: { Address: "198.18.0.2", Port: 443 } } })] })],
    ["the service's meta", state({ MeshGateways: [gateway({}, { Meta: {} })] })],
    ["a check's status", state({ MeshGateways: [gateway({}, {}, [check({ Status: "critical" })])] })],
    ["a check's output", state({ MeshGateways: [gateway({}, {}, [check({ Output: "gone" })])] })],
    ["one more check", state({ MeshGateways: [gateway({}, {}, [check(), check({ CheckID: "svc" })])] })],
  ])("differs on %s", (_: string, other: FederationState) => {
    expect(isSameFederationState(state(), other)).toBe(false);
    expect(isSameFederationState(other, state())).toBe(false);
  });

  test("order matters: the catalog's order is compared as it is", () => {
    const a = gateway({ Node: "a" }), b = gateway({ Node: "b" });
    expect(isSameFederationState(state({ MeshGateways: [a, b] }), state({ MeshGateways: [b, a] }))).toBe(false);
    const c1 = check({ CheckID: "c1" }), c2 = check({ CheckID: "c2" });
    expect(isSameFederationState(state({ MeshGateways: [gateway({}, {}, [c1, c2])] }), state({ MeshGateways: [gateway({}, {}, [c2, c1])] }))).toBe(false);
  });
});

describe("meshGatewaysByDatacenter", () => {
  test("only states with gateways, keyed by their datacenter in sorted order", () => {
    const out = meshGatewaysByDatacenter([
      state({ Datacenter: "dc3", MeshGateways: [gateway({ Node: "c" })] }),
      state({ Datacenter: "dc1", MeshGateways: undefined }),
      state({ Datacenter: "dc2" }),
    ]);
    expect(JSON.stringify(Object.keys(out.DatacenterNodes))).toBe('["dc2","dc3"]');
    expect(out.DatacenterNodes.dc3![0]!.Node.Node).toBe("c");
    expect(meshGatewaysByDatacenter([])).toEqual({ DatacenterNodes: {} });
  });

  test("a datacenter named like an Object.prototype key is an own key", () => {
    const out = meshGatewaysByDatacenter([state({ Datacenter: "__proto__" })]);
    expect(Object.hasOwn(out.DatacenterNodes, "__proto__")).toBe(true);
    expect(JSON.parse(JSON.stringify(out.DatacenterNodes)).__proto__).toHaveLength(1);
  });
});

describe("isRfc3339", () => {
  test.each([
    ["2020-05-01T12:00:00Z", true],
    ["0001-01-01T00:00:00Z", true],
    ["2020-05-01T12:00:00.123456789Z", true],
    ["2020-05-01T12:00:00+02:00", true],
    ["2020-02-29T00:00:00Z", true],
    ["2021-02-29T00:00:00Z", false],
    ["2020-13-01T00:00:00Z", false],
    ["2020-05-01T24:00:00Z", false],
    ["2020-05-01T12:00:60Z", false],
    ["2020-05-01 12:00:00Z", false],
    ["2020-05-01T12:00:00", false],
    ["2020-05-01T12:00:00z", false],
    ["", false],
  ])("%s: %p", (s: string, ok: boolean) => {
    expect(isRfc3339(s)).toBe(ok);
  });
});
