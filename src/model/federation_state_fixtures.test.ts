/** Federation-state test values shared by the model, state, server and HTTP tests (no tests here). */
import type { CheckServiceNode, HealthCheck, Node, NodeService } from "./catalog.ts";
import type { FederationState, FederationStateWrite } from "./federation_state.ts";

export const node = (more: Partial<Node> = {}): Node => ({
  ID: "11111111-2222-3333-4444-555555555555", Node: "gw-node", Address: "10.0.0.1", Datacenter: "dc2",
  TaggedAddresses: { lan: "10.0.0.1", wan: "198.18.0.1" }, Meta: { rack: "a" }, CreateIndex: 5, ModifyIndex: 6, ...more,
});
export const service = (more: Partial<NodeService> = {}): NodeService => ({
  Kind: "mesh-gateway", ID: "mesh-gateway", Service: "mesh-gateway", Tags: null, Address: "10.0.0.1",
  TaggedAddresses: { wan: { Address: "198.18.0.1", Port: 443 } }, Meta: { "consul-wan-federation": "1" }, Port: 8443,
  Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {},
  CreateIndex: 7, ModifyIndex: 8, ...more,
});
export const check = (more: Partial<HealthCheck> = {}): HealthCheck => ({
  Node: "gw-node", CheckID: "serfHealth", Name: "Serf Health Status", Status: "passing", Notes: "", Output: "Agent alive and reachable",
  ServiceID: "", ServiceName: "", ServiceTags: null, Type: "", Definition: {}, CreateIndex: 5, ModifyIndex: 5, ...more,
});
export const gateway = (n: Partial<Node> = {}, s: Partial<NodeService> = {}, checks: HealthCheck[] = [check()]): CheckServiceNode =>
  ({ Node: node(n), Service: service(s), Checks: checks });
export const state = (more: Partial<FederationState> = {}): FederationState => ({
  Datacenter: "dc2", MeshGateways: [gateway()], UpdatedAt: "2020-05-01T12:00:00Z", PrimaryModifyIndex: 42, CreateIndex: 10, ModifyIndex: 42, ...more,
});
/** A state as a command writes it (no Raft indexes). */
export function write(more: Partial<FederationStateWrite> = {}): FederationStateWrite {
  const { CreateIndex: _c, ModifyIndex: _m, ...w } = state(more);
  return w;
}
