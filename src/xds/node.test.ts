/**
 * The node resolver as a function: which of node.id and node.cluster is used, and which cache key each
 * kind of client gets for each kind of local node (Envoy by user agent "envoy" or none, the causeway
 * gateway, proxyless gRPC clients), with the refusals' codes and messages.
 */
import { describe, expect, test } from "bun:test";
import { CAUSEWAY_GATEWAY_USER_AGENT, describeNode, isEnvoy, resolveByProxyId, type NodeIdentity, type NodeTarget } from "./node.ts";

const VIEW = "~view~web-sidecar-proxy";
const targets: Record<string, NodeTarget> = {
  "web-sidecar-proxy": { kind: "connect-proxy", proxylessKey: VIEW },
  "api-sidecar-proxy": { kind: "connect-proxy", proxylessKey: undefined },
  gw: { kind: "mesh-gateway" },
  web: { kind: "proxyless" },
};
const resolve = resolveByProxyId((id) => targets[id]);
const node = (id: string, userAgentName: string, cluster = ""): NodeIdentity => ({ id, cluster, userAgentName });
const GRPC_AGENTS = ["gRPC Node Pure JS", "gRPC Go", "gRPC Java", "gRPC C++"];

describe("resolveByProxyId", () => {
  test("Envoy is user agent envoy or none (Envoy before 1.14)", () => {
    expect(["", "envoy", "gRPC Go", "causeway-gateway", "Envoy"].map((ua) => isEnvoy(node("x", ua)))).toEqual([true, true, false, false, false]);
  });

  test("a connect proxy ID: Envoy gets the proxy's key, any other client the proxy's proxyless view", () => {
    for (const ua of ["", "envoy"]) expect(resolve(node("web-sidecar-proxy", ua))).toEqual({ ok: true, nodeId: "web-sidecar-proxy" });
    for (const ua of GRPC_AGENTS) expect(resolve(node("web-sidecar-proxy", ua))).toEqual({ ok: true, nodeId: VIEW });
    // The fallback to node.cluster follows the same rules.
    expect(resolve(node("", "gRPC Go", "web-sidecar-proxy"))).toEqual({ ok: true, nodeId: VIEW });
    expect(resolve(node("unknown", "envoy", "web-sidecar-proxy"))).toEqual({ ok: true, nodeId: "web-sidecar-proxy" });
  });

  test("a connect proxy whose view is unavailable refuses non-Envoy clients with NOT_FOUND saying why", () => {
    expect(resolve(node("api-sidecar-proxy", "envoy"))).toEqual({ ok: true, nodeId: "api-sidecar-proxy" });
    expect(resolve(node("api-sidecar-proxy", "gRPC Go", "api"))).toEqual({
      ok: false,
      code: "not_found",
      message: `connect proxy "api-sidecar-proxy" (node.cluster "api") has no proxyless view for user agent "gRPC Go"` +
        ` - the key it would be kept under is the ID of another service or client identity`,
    });
  });

  test("a mesh gateway ID: Envoy and the causeway gateway only; a proxyless client is refused with NOT_FOUND saying why", () => {
    for (const ua of ["", "envoy", CAUSEWAY_GATEWAY_USER_AGENT]) expect(resolve(node("gw", ua))).toEqual({ ok: true, nodeId: "gw" });
    const refused = resolve(node("gw", "gRPC Node Pure JS", "web"));
    expect(refused).toEqual({
      ok: false,
      code: "not_found",
      message: `"gw" (node.cluster "web") is a mesh gateway - its configuration is served to Envoy and the causeway gateway only` +
        ` and not to user agent "gRPC Node Pure JS" - a proxyless gRPC client names a service ID or a sidecar proxy ID`,
    });
    // node.id decides: a known node.id is not passed over for a node.cluster that would be served.
    expect(resolve(node("gw", "gRPC Go", "web")).ok).toBe(false);
  });

  test("a proxyless node ID (or a plain `true`) is served under its own ID to every client", () => {
    for (const ua of ["", "envoy", ...GRPC_AGENTS]) expect(resolve(node("web", ua))).toEqual({ ok: true, nodeId: "web" });
    const plain = resolveByProxyId((id) => id === "p");
    expect(plain(node("p", "gRPC Go"))).toEqual({ ok: true, nodeId: "p" });
    expect(plain(node("q", "envoy", "p"))).toEqual({ ok: true, nodeId: "p" });
    expect(plain(node("q", "envoy")).ok).toBe(false);
  });

  test("unknown: NOT_FOUND naming both fields; no node or neither field: INVALID_ARGUMENT", () => {
    expect(resolve(node("nope", "gRPC Go", "ghost"))).toEqual({
      ok: false, code: "not_found", message: `unknown proxy "nope" (node.cluster "ghost") - no proxy service with this ID is registered with this agent`,
    });
    const invalid = { ok: false, code: "invalid_argument", message: "xDS request has no node - node.id (the proxy service ID) is required" };
    expect(resolve(undefined)).toEqual(invalid);
    expect(resolve(node("", "envoy"))).toEqual(invalid);
    expect(describeNode({ id: "a", cluster: "b" })).toBe(`"a" (node.cluster "b")`);
  });

  test("refusal messages avoid the characters grpc-js clients receive percent-encoded", () => {
    for (const n of [node("gw", "gRPC Go"), node("api-sidecar-proxy", "gRPC Go"), node("nope", "gRPC Go")]) {
      const r = resolve(n);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).not.toMatch(/[,;/?:@&=+$#]/);
    }
  });
});
