/**
 * Proxyless gRPC against a real `causeway agent -dev`: three grpc-js echo backends registered over HTTP,
 * a local service `client` whose ID is the xDS node ID, and a @grpc/grpc-js-xds client (a child process,
 * fixtures/xds_proxyless_client.ts) with a bootstrap naming the agent's gRPC port, making real RPCs to
 * `xds:///echo` and `xds:///lookup`: a service-splitter sends traffic 50/50 to two subsets of echo, and
 * when lookup's only instance turns critical the resolver's failover sends calls to lookup-backup. A
 * second client, `web`, has a sidecar with one upstream (echo): it resolves that name and nothing else.
 * A third client's node ID is a sidecar's proxy ID (`shop-sidecar-proxy`): it is served that sidecar's
 * upstreams as proxyless resources while an Envoy stream with the same node ID gets the sidecar's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fromBinary } from "@bufbuild/protobuf";
import { ListenerSchema } from "../../src/gen/envoy/config/listener/v3/listener_pb.ts";
import { adsClient, LDS } from "../harness/ads_client.ts";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { startEchoBackend } from "./fixtures/xds_proxyless_echo.ts";

let agent: AgentProcess;
let grpcAddr = "";
const backends: { name: string; port: number; stop(): Promise<void> }[] = [];
const clients: ChildProcess[] = [];

beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    "src/main/cli.ts", "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  grpcAddr = /gRPC: ([\d.]+:\d+)/.exec(agent.output())?.[1] ?? "";
  for (const name of ["b1", "b2", "b3"]) backends.push({ name, ...(await startEchoBackend(name)) });
});
afterAll(async () => {
  for (const c of clients) if (c.exitCode === null) c.kill("SIGKILL");
  await Promise.all(backends.map((b) => b.stop().catch(() => {})));
  await agent?.stop("SIGKILL").catch(() => {});
});

const put = async (path: string, body?: unknown) => {
  const res = await fetch(`${agent.httpUrl}${path}`, { method: "PUT", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
};
const portOf = (name: string) => backends.find((b) => b.name === name)!.port;

/** A client child with node ID `nodeId`: `call(target, n)` answers which backends served n calls. */
function startClient(nodeId: string) {
  const bootstrap = {
    xds_servers: [{ server_uri: grpcAddr, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: { id: nodeId, cluster: nodeId, locality: {} },
  };
  const child = spawn(process.execPath, ["test/e2e/fixtures/xds_proxyless_client.ts"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap) },
  });
  clients.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const answers: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => answers.shift()?.(line));
  const call = (target: string, n: number) =>
    new Promise<{ backends: Record<string, number>; errors: string[] }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`client did not answer within 30 s; stderr:\n${stderr}`)), 30_000);
      answers.push((line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
      child.stdin!.write(`call ${target} ${n}\n`);
    });
  return { child, call };
}

test("a grpc-js-xds client resolves xds:///<service>: a 50/50 split reaches both subsets, failover reaches the backup", async () => {
  expect(grpcAddr).not.toBe("");
  await poll(() => fetch(`${agent.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, "an active CA root");
  await put("/v1/agent/service/register", { Name: "client", ID: "client", Port: 0 });
  await put("/v1/agent/service/register", { Name: "echo", ID: "echo-1", Address: "127.0.0.1", Port: portOf("b1"), Meta: { version: "v1" } });
  await put("/v1/agent/service/register", { Name: "echo", ID: "echo-2", Address: "127.0.0.1", Port: portOf("b2"), Meta: { version: "v2" } });
  await put("/v1/agent/service/register", {
    Name: "lookup", ID: "lookup-1", Address: "127.0.0.1", Port: portOf("b1"), Check: { CheckID: "lookup-ttl", Name: "lookup ttl", TTL: "10m", Status: "passing" },
  });
  await put("/v1/agent/service/register", { Name: "lookup-backup", ID: "lookup-backup-1", Address: "127.0.0.1", Port: portOf("b3") });
  await put("/v1/config", { Kind: "service-defaults", Name: "echo", Protocol: "grpc" });
  await put("/v1/config", {
    Kind: "service-resolver", Name: "echo",
    Subsets: { v1: { Filter: "Service.Meta.version == v1" }, v2: { Filter: "Service.Meta.version == v2" } },
  });
  await put("/v1/config", { Kind: "service-splitter", Name: "echo", Splits: [{ Weight: 50, ServiceSubset: "v1" }, { Weight: 50, ServiceSubset: "v2" }] });
  await put("/v1/config", { Kind: "service-resolver", Name: "lookup", Failover: { "*": { Service: "lookup-backup" } } });

  const c = startClient("client");
  try {
    // The split: both subsets (b1 and b2) serve calls; nothing else does.
    const split = await poll(() => c.call("xds:///echo", 40), (r) => r.errors.length === 0 && (r.backends["b1"] ?? 0) > 0 && (r.backends["b2"] ?? 0) > 0, 30_000, "calls to echo reaching both subsets");
    expect(Object.keys(split.backends).sort()).toEqual(["b1", "b2"]);

    // Failover: lookup's only instance serves while passing ...
    const before = await poll(() => c.call("xds:///lookup", 10), (r) => r.errors.length === 0 && r.backends["b1"] === 10, 30_000, "calls to lookup reaching its instance");
    expect(before.backends).toEqual({ b1: 10 });
    // ... and once it is critical, the same channel's calls reach lookup-backup.
    await put("/v1/agent/check/fail/lookup-ttl");
    const after = await poll(() => c.call("xds:///lookup", 10), (r) => r.errors.length === 0 && r.backends["b3"] === 10, 30_000, "calls to lookup failing over to lookup-backup");
    expect(after.backends).toEqual({ b3: 10 });
  } finally {
    c.child.stdin!.end();
  }
}, 120_000);

/** `c` resolves echo (its calls reach echo's instances, b1 and b2) and not lookup. */
async function expectEchoOnly(c: ReturnType<typeof startClient>, who: string) {
  const echo = await poll(() => c.call("xds:///echo", 20), (r) => r.errors.length === 0 && (r.backends["b1"] ?? 0) + (r.backends["b2"] ?? 0) === 20, 30_000, `${who}'s calls to echo`);
  expect(Object.keys(echo.backends).every((b) => b === "b1" || b === "b2")).toBe(true);
  const lookup = await c.call("xds:///lookup", 1);
  expect(lookup.backends).toEqual({});
  expect(lookup.errors).toHaveLength(1);
}

test("a service with a sidecar resolves its sidecar's upstreams only", async () => {
  await put("/v1/agent/service/register", {
    Name: "web", ID: "web", Port: 8080, Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "echo", LocalBindPort: 9191 }] } } },
  });
  const c = startClient("web");
  try {
    await expectEchoOnly(c, "web");
  } finally {
    c.child.stdin!.end();
  }
}, 60_000);

test("a client whose node ID is a sidecar's proxy ID resolves that sidecar's upstreams; Envoy with that ID keeps the sidecar's resources", async () => {
  await put("/v1/agent/service/register", {
    Name: "shop", ID: "shop", Port: 8081, Connect: { SidecarService: { Port: 21002, Proxy: { Upstreams: [{ DestinationName: "echo", LocalBindPort: 9393 }] } } },
  });
  const c = startClient("shop-sidecar-proxy");
  const envoy = adsClient(grpcAddr, "shop-sidecar-proxy", "shop");
  try {
    await expectEchoOnly(c, "the proxy-ID client");

    // Envoy (no user agent, as before 1.14) with the same node ID: the sidecar's public and upstream listeners.
    envoy.request(LDS);
    const lds = await envoy.next(LDS);
    expect(lds.resources.map((a) => fromBinary(ListenerSchema, a.value).name).sort()).toEqual(["echo:127.0.0.1:9393", "public_listener:0.0.0.0:21002"]);
    // The proxyless client is unaffected by the Envoy stream.
    expect((await c.call("xds:///echo", 4)).errors).toEqual([]);
  } finally {
    envoy.close();
    c.child.stdin!.end();
  }
}, 60_000);
