/**
 * Centralized service configuration against a real `causeway agent -dev`: `web` is registered with an
 * HTTP check and a sidecar that sets neither Expose nor any `envoy_*` key. Writing proxy-defaults "global"
 * with `Expose: {Checks: true}` and `envoy_prometheus_bind_addr` makes the agent run web's check through
 * the sidecar's exposed listener port, show the merged proxy on /v1/agent/service/:id (so `connect envoy
 * -bootstrap` adds the Prometheus listener) and sync it to the catalog; deleting the entry undoes it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

let agent: AgentProcess;
let grpcAddr = "";
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    "src/main/cli.ts", "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  grpcAddr = /gRPC: ([\d.]+:\d+)/.exec(agent.output())?.[1] ?? "";
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
});

type Checks = Record<string, { Output: string; Definition: { HTTP?: string } }>;
const checks = () => fetch(`${agent.httpUrl}/v1/agent/checks`).then((r) => r.json() as Promise<Checks>);
const outputOf = (c: Checks) => c["web-health"]?.Output ?? "";
const put = async (path: string, body: unknown, method = "PUT") => {
  const res = await fetch(`${agent.httpUrl}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect(`${path}: ${res.status} ${res.status === 200 ? "" : await res.text()}`).toBe(`${path}: 200 `);
};

/** `connect envoy -bootstrap` for the sidecar: the listener names of the printed bootstrap. */
async function bootstrapListeners(): Promise<string[]> {
  const proc = Bun.spawn([
    process.execPath, "src/main/cli.ts", "connect", "envoy", "-bootstrap", "-proxy-id", "web-sidecar-proxy", "-http-addr", agent.httpUrl, "-grpc-addr", grpcAddr,
  ], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`connect envoy exited ${code}: ${err}`);
  const listeners = (JSON.parse(out) as { static_resources: { listeners?: { name: string }[] } }).static_resources.listeners ?? [];
  return listeners.map((l) => l.name);
}

test("proxy-defaults reaches the local agent: exposed checks through the sidecar, the merged proxy in the agent API and the catalog", async () => {
  expect(grpcAddr).not.toBe("");
  await poll(() => fetch(`${agent.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, "an active CA root");
  await put("/v1/agent/service/register", {
    Name: "web", Port: 8080,
    Check: { CheckID: "web-health", Name: "web health", HTTP: "http://127.0.0.1:8080/health", Interval: "1s" },
    Connect: { SidecarService: { Port: 21000, Checks: [{ Name: "web alias", AliasService: "web" }] } },
  });
  // Nothing central yet: the check probes web itself.
  await poll(checks, (c) => outputOf(c).includes("127.0.0.1:8080/health"), 20_000, "the check's output naming web's own port");
  expect(await bootstrapListeners()).toEqual([]);

  await put("/v1/config", { Kind: "proxy-defaults", Name: "global", Config: { envoy_prometheus_bind_addr: "0.0.0.0:9102" }, Expose: { Checks: true } });

  // (a) The agent now runs web's check through the sidecar's exposed listener (nothing listens there, so the output names it).
  const exposed = await poll(checks, (c) => outputOf(c).includes("127.0.0.1:21500/health"), 20_000, "the check's output naming the exposed port");
  expect(exposed["web-health"]!.Definition.HTTP).toBe("http://127.0.0.1:8080/health");

  // (b) The sidecar as the agent shows it carries the key only proxy-defaults sets, and connect envoy uses it.
  const sidecar = await fetch(`${agent.httpUrl}/v1/agent/service/web-sidecar-proxy`).then((r) => r.json() as Promise<{ Proxy: { Config?: Record<string, unknown>; Expose?: { Checks?: boolean } } }>);
  expect(sidecar.Proxy.Config?.["envoy_prometheus_bind_addr"]).toBe("0.0.0.0:9102");
  expect(sidecar.Proxy.Expose?.Checks).toBe(true);
  expect(await bootstrapListeners()).toEqual(["envoy_prometheus_metrics_listener"]);
  // Anti-entropy syncs the merged service to the catalog, as Consul 1.8's agent does.
  await poll(
    () => fetch(`${agent.httpUrl}/v1/catalog/service/web-sidecar-proxy`).then((r) => r.json() as Promise<{ ServiceProxy: { Config?: Record<string, unknown> } }[]>),
    (s) => s[0]?.ServiceProxy.Config?.["envoy_prometheus_bind_addr"] === "0.0.0.0:9102",
    20_000, "the merged proxy in the catalog",
  );

  // Deleting the entry stops the rerouting and takes the key away again.
  await put("/v1/config/proxy-defaults/global", undefined, "DELETE");
  await poll(checks, (c) => outputOf(c).includes("127.0.0.1:8080/health"), 20_000, "the check's output naming web's own port again");
  const after = await fetch(`${agent.httpUrl}/v1/agent/service/web-sidecar-proxy`).then((r) => r.json() as Promise<{ Proxy: { Config?: Record<string, unknown> } }>);
  expect(after.Proxy.Config?.["envoy_prometheus_bind_addr"]).toBeUndefined();
}, 90_000);
