import { describe, expect, test } from "bun:test";
import { kit, run, type Kit } from "./agent_test_kit.test.ts";
import { emptyCheckType } from "./convert.ts";
import { ExposedPorts, exposePathOf, grpcInjectAddr, httpInjectAddr } from "./exposed_checks.ts";
import type { GrpcHealthRequest } from "./ports.ts";
import { parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

const svc = (body: Record<string, unknown>) => parseServiceRegistration(body);

describe("target rewriting (httpInjectAddr, grpcInjectAddr)", () => {
  test("HTTP: host and port replaced, scheme, path and query kept; IPv6 bracketed", () => {
    expect(httpInjectAddr("http://127.0.0.1:8080/health?verbose=1", "10.0.0.9", 21500)).toBe("http://10.0.0.9:21500/health?verbose=1");
    expect(httpInjectAddr("https://localhost/status", "10.0.0.9", 21501)).toBe("https://10.0.0.9:21501/status");
    expect(httpInjectAddr("http://[::1]:8080/h", "fd00::9", 21502)).toBe("http://[fd00::9]:21502/h");
    expect(httpInjectAddr("not a url", "10.0.0.9", 21500)).toBe("not a url");
  });

  test("gRPC: host:port replaced, /service kept", () => {
    expect(grpcInjectAddr("127.0.0.1:9090/api.Health", "10.0.0.9", 21500)).toBe("10.0.0.9:21500/api.Health");
    expect(grpcInjectAddr("localhost:9090", "10.0.0.9", 21501)).toBe("10.0.0.9:21501");
    expect(grpcInjectAddr("[::1]:9090", "::1", 21502)).toBe("[::1]:21502");
  });

  test("the expose path of a check: original path and port, listener port from the proxied target", () => {
    const http = { ...emptyCheckType(), HTTP: "http://127.0.0.1:8080/health?x=1", IntervalMs: 10_000 };
    expect(exposePathOf(http, "http://10.0.0.9:21500/health?x=1")).toEqual({
      ListenerPort: 21500, Path: "/health", LocalPathPort: 8080, Protocol: "http", ParsedFromCheck: true,
    });
    const grpc = { ...emptyCheckType(), GRPC: "127.0.0.1:9090/api", IntervalMs: 10_000 };
    expect(exposePathOf(grpc, "10.0.0.9:21501/api")).toEqual({
      ListenerPort: 21501, Path: "/grpc.health.v1.Health/Check", LocalPathPort: 9090, Protocol: "http2", ParsedFromCheck: true,
    });
    // No port in the original URL: Consul's parseCheckPath fails and the check is left out.
    expect(exposePathOf({ ...http, HTTP: "http://localhost/health" }, "http://10.0.0.9:21500/health")).toBeUndefined();
  });
});

describe("listener ports (listenerPortLocked)", () => {
  test("lowest free port of the inclusive range; a key keeps its port; released ports are reused; exhaustion is undefined", () => {
    const p = new ExposedPorts({ min: 100, max: 102 });
    expect(p.allocate("web", "a")).toBe(100);
    expect(p.allocate("web", "b")).toBe(101);
    expect(p.allocate("web", "a")).toBe(100);
    expect(p.allocate("api", "a")).toBe(102);
    expect(p.allocate("api", "b")).toBeUndefined();
    p.release("web", "b");
    expect(p.allocate("api", "b")).toBe(101);
    expect(p.held("web", "b")).toBeUndefined();
    expect(new ExposedPorts({ min: 0, max: 0 }).allocate("web", "a")).toBeUndefined();
  });
});

interface ProbeKit extends Kit {
  readonly httpUrls: string[];
  readonly grpcTargets: string[];
}

function probeKit(exposePorts?: { min: number; max: number }): ProbeKit {
  const grpcTargets: string[] = [];
  const httpUrls: string[] = [];
  const k = kit({
    ...(exposePorts ? { exposePorts } : {}),
    probes: {
      http: async (req) => {
        httpUrls.push(req.url);
        return { status: 200, statusText: "OK", body: "" };
      },
      tcp: async () => {},
      grpc: async (req: GrpcHealthRequest) => {
        grpcTargets.push(req.service ? `${req.target}/${req.service}` : req.target);
        return 1;
      },
    },
  });
  return Object.assign(k, { httpUrls, grpcTargets });
}

const WEB_CHECKS = [
  { CheckID: "web-http", Name: "http", HTTP: "http://127.0.0.1:8080/health", Interval: "10s" },
  { CheckID: "web-grpc", Name: "grpc", GRPC: "127.0.0.1:9090/web", Interval: "10s" },
  { CheckID: "web-ttl", Name: "ttl", TTL: "30s" },
];

const webWithSidecar = (expose: boolean, extra: Record<string, unknown> = {}) => svc({
  Name: "web", Port: 8080, Checks: WEB_CHECKS,
  Connect: { SidecarService: { Address: "10.0.0.9", Proxy: { Expose: { Checks: expose } } } },
  ...extra,
});

/** Runs the checks once and returns the targets they probed (and forgets them). */
async function probed(k: ProbeKit): Promise<{ http: string[]; grpc: string[] }> {
  k.httpUrls.length = 0;
  k.grpcTargets.length = 0;
  await run(k.clock, 10_500);
  return { http: [...new Set(k.httpUrls)], grpc: [...new Set(k.grpcTargets)] };
}

describe("Expose.Checks on a sidecar", () => {
  test("HTTP and gRPC checks of the destination run through the proxy on ports of the range; definitions are untouched", async () => {
    const k = probeKit();
    k.agent.registerService(webWithSidecar(true));
    expect(await probed(k)).toEqual({ http: ["http://10.0.0.9:21501/health"], grpc: ["10.0.0.9:21500/web"] });
    expect(k.agent.check("web-http")!.Definition.HTTP).toBe("http://127.0.0.1:8080/health");
    expect(k.agent.check("web-grpc")!.Definition.GRPC).toBe("127.0.0.1:9090/web");
    // Ports are handed out, and paths listed, in check ID order: web-grpc before web-http.
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([
      { ListenerPort: 21500, Path: "/grpc.health.v1.Health/Check", LocalPathPort: 9090, Protocol: "http2", ParsedFromCheck: true },
      { ListenerPort: 21501, Path: "/health", LocalPathPort: 8080, Protocol: "http", ParsedFromCheck: true },
    ]);
    expect(k.agent.exposedCheckPaths("web")).toEqual([]);
    k.agent.stop();
  });

  test("without Expose.Checks nothing is rerouted and no paths exist", async () => {
    const k = probeKit();
    k.agent.registerService(webWithSidecar(false));
    expect(await probed(k)).toEqual({ http: ["http://127.0.0.1:8080/health"], grpc: ["127.0.0.1:9090/web"] });
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([]);
    k.agent.stop();
  });

  test("ports skip those held by other services' exposed checks; re-registration keeps them, even below a freed port", async () => {
    const k = probeKit({ min: 30000, max: 30010 });
    k.agent.registerService(svc({
      Name: "api", Port: 7000, Check: { HTTP: "http://127.0.0.1:7000/ok", Interval: "10s" },
      Connect: { SidecarService: { Proxy: { Expose: { Checks: true } } } },
    }));
    k.agent.registerService(webWithSidecar(true));
    expect(k.agent.exposedCheckPaths("api-sidecar-proxy").map((p) => p.ListenerPort)).toEqual([30000]);
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").map((p) => p.ListenerPort)).toEqual([30001, 30002]);
    // The proxy's unset address: the checks go to the local host.
    expect((await probed(k)).http.sort()).toEqual(["http://10.0.0.9:30002/health", "http://127.0.0.1:30000/ok"]);
    k.agent.deregisterService("api");
    k.agent.registerService(webWithSidecar(true, { Tags: ["v2"] }));
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").map((p) => p.ListenerPort)).toEqual([30001, 30002]);
    expect(await probed(k)).toEqual({ http: ["http://10.0.0.9:30002/health"], grpc: ["10.0.0.9:30001/web"] });
    k.agent.stop();
  });

  test("a check added later to the destination is exposed at once, and its port freed when it goes", async () => {
    const k = probeKit();
    k.agent.registerService(webWithSidecar(true));
    k.agent.registerCheck(parseCheckRegistration({ ID: "late", Name: "late", ServiceID: "web", HTTP: "http://127.0.0.1:8081/late", Interval: "10s" }));
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").find((p) => p.Path === "/late")).toEqual({
      ListenerPort: 21502, Path: "/late", LocalPathPort: 8081, Protocol: "http", ParsedFromCheck: true,
    });
    k.agent.deregisterCheck("late");
    k.agent.registerCheck(parseCheckRegistration({ ID: "later", Name: "later", ServiceID: "web", HTTP: "http://127.0.0.1:8082/x", Interval: "10s" }));
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").find((p) => p.Path === "/x")?.ListenerPort).toBe(21502);
    k.agent.stop();
  });

  test("turning Expose.Checks off resets targets and frees ports; turning it on again exposes them", async () => {
    const k = probeKit();
    let changes = 0;
    k.agent.onChange(() => changes++);
    k.agent.registerService(webWithSidecar(true));
    k.agent.registerService(webWithSidecar(false));
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([]);
    expect(await probed(k)).toEqual({ http: ["http://127.0.0.1:8080/health"], grpc: ["127.0.0.1:9090/web"] });
    const seen = changes;
    k.agent.registerService(webWithSidecar(true));
    expect(changes).toBeGreaterThan(seen);
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").map((p) => p.ListenerPort)).toEqual([21500, 21501]);
    k.agent.stop();
  });

  test("a proxy registered on its own exposes its destination's existing checks; deregistering it resets them", async () => {
    const k = probeKit();
    k.agent.registerService(svc({ Name: "web", Port: 8080, Checks: WEB_CHECKS }));
    const paths: unknown[] = [];
    // The change is announced after the routing is in place, so listeners read the new paths.
    k.agent.onChange(() => paths.push(k.agent.exposedCheckPaths("web-proxy").length));
    k.agent.registerService(svc({
      Kind: "connect-proxy", Name: "web-proxy", Port: 20000, Address: "10.0.0.5",
      Proxy: { DestinationServiceName: "web", DestinationServiceID: "web", Expose: { Checks: true } },
    }));
    expect(paths.at(-1)).toBe(2);
    expect(await probed(k)).toEqual({ http: ["http://10.0.0.5:21501/health"], grpc: ["10.0.0.5:21500/web"] });
    k.agent.deregisterService("web-proxy");
    expect(paths.at(-1)).toBe(0);
    expect(await probed(k)).toEqual({ http: ["http://127.0.0.1:8080/health"], grpc: ["127.0.0.1:9090/web"] });
    k.agent.stop();
  });

  test("when the range is exhausted the check runs on its own target, with a warning", async () => {
    const k = probeKit({ min: 21500, max: 21500 });
    k.agent.registerService(webWithSidecar(true));
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([
      { ListenerPort: 21500, Path: "/grpc.health.v1.Health/Check", LocalPathPort: 9090, Protocol: "http2", ParsedFromCheck: true },
    ]);
    expect(k.logs.some((l) => l.includes("no ports available to expose 'web-http'"))).toBe(true);
    expect(await probed(k)).toEqual({ http: ["http://127.0.0.1:8080/health"], grpc: ["10.0.0.9:21500/web"] });
    k.agent.stop();
  });
});
