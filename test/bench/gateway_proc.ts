/**
 * Causeway's gateway data plane as a benchmark process: the real proxy (src/gateway: ClientHello parser,
 * SNI matcher, balancer, splice) on a static configuration equal to what the agent sends a mesh gateway
 * for local services (one listener with tls_inspector and an sni_cluster catch-all chain; one EDS
 * cluster per SNI), without an agent or xDS stream, so only the data path is measured.
 * argv[2]: JSON `{ port, routes: { <sni>: <backend port> } }`. Prints READY when listening.
 */
import {
  createBalancer, createClientHelloParser, createGatewayProxy, GatewayStats, listenerMatcher, type Balancer, type ClusterConfig, type GatewayConfig, type ListenerConfig,
} from "../../src/gateway/index.ts";
import { dialTcp, listenTcp, silentLogger, systemClock } from "../../src/platform/index.ts";

const { port, routes } = JSON.parse(process.argv[2]!) as { port: number; routes: Record<string, number> };
const clock = systemClock();
const listener: ListenerConfig = {
  name: `default:127.0.0.1:${port}`, address: "127.0.0.1", port, tlsInspector: true,
  chains: [{ serverNames: [], route: { kind: "sni-cluster" }, statPrefix: "mesh_gateway_local_default_tcp" }],
};
const clusters = new Map<string, ClusterConfig>(Object.entries(routes).map(([sni, p]) => [sni, {
  name: sni, type: "EDS", connectTimeoutMs: 5000, outlier: { consecutiveFailures: 5, baseEjectionMs: 30_000, maxEjectionPercent: 10 },
  endpoints: [{ address: "127.0.0.1", port: p, healthy: true, weight: 1 }],
}]));
const config: GatewayConfig = { listeners: new Map([[listener.name, listener]]), clusters };
const balancers = new Map<string, Balancer>();
const proxy = createGatewayProxy({
  clock, logger: silentLogger(), stats: new GatewayStats(), listen: listenTcp, dial: dialTcp,
  helloParser: () => createClientHelloParser(),
  chainMatcher: (l) => {
    const m = listenerMatcher(l);
    return (sni) => m.match(sni);
  },
  picker: (c) => {
    let b = balancers.get(c.name);
    if (!b) balancers.set(c.name, (b = createBalancer(c, clock)));
    else b.update(c);
    return b;
  },
});
await proxy.apply(config);
process.stdout.write("READY\n");
process.on("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
