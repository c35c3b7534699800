/**
 * Exposed checks against a real `causeway agent -dev`: `web` is registered with an HTTP check and a
 * sidecar with `Proxy.Expose.Checks`; the agent runs the check through the proxy's listener port from
 * the default expose range (21500) while the check's definition keeps its own URL, and the sidecar's
 * ADS listeners include the exposed path listener on that port.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary } from "@bufbuild/protobuf";
import { ListenerSchema } from "../../src/gen/envoy/config/listener/v3/listener_pb.ts";
import { DiscoveryRequestSchema, type DiscoveryResponse } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openAdsStream } from "../harness/net_helpers.ts";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

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

/** The listener names of the first LDS response that satisfies `ok` on one ADS stream as `nodeId`. */
async function listenerNames(nodeId: string, ok: (names: string[]) => boolean, ms = 20_000): Promise<string[]> {
  const { client, call } = openAdsStream(grpcAddr, grpc.credentials.createInsecure());
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching LDS response within ${ms} ms`)), ms);
      call.on("error", (e: Error) => (clearTimeout(timer), reject(e)));
      call.on("data", (r: DiscoveryResponse) => {
        if (r.typeUrl !== LDS) return;
        const names = r.resources.map((a) => fromBinary(ListenerSchema, a.value).name).sort();
        if (ok(names)) {
          clearTimeout(timer);
          resolve(names);
          return;
        }
        call.write(create(DiscoveryRequestSchema, { typeUrl: LDS, versionInfo: r.versionInfo, responseNonce: r.nonce }));
      });
      call.write(create(DiscoveryRequestSchema, { typeUrl: LDS, node: { id: nodeId, cluster: "web" } }));
    });
  } finally {
    call.cancel();
    client.close();
  }
}

test("an exposed HTTP check runs through the sidecar's expose port, which the sidecar listens on", async () => {
  expect(grpcAddr).not.toBe("");
  await poll(() => fetch(`${agent.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, "an active CA root");
  const res = await fetch(`${agent.httpUrl}/v1/agent/service/register`, {
    method: "PUT",
    body: JSON.stringify({
      Name: "web", Port: 8080,
      Check: { CheckID: "web-health", Name: "web health", HTTP: "http://127.0.0.1:8080/health", Interval: "1s" },
      Connect: { SidecarService: { Port: 21000, Proxy: { Expose: { Checks: true } }, Checks: [{ Name: "web alias", AliasService: "web" }] } },
    }),
  });
  expect(res.status).toBe(200);

  // The agent probes the proxy's listener (nothing listens there in this test, so the output names it).
  const checks = await poll(
    () => fetch(`${agent.httpUrl}/v1/agent/checks`).then((r) => r.json() as Promise<Record<string, { Output: string; Definition: { HTTP?: string } }>>),
    (c) => (c["web-health"]?.Output ?? "").includes("127.0.0.1:21500/health"),
    20_000, "the check's output naming the exposed port",
  );
  expect(checks["web-health"]!.Definition.HTTP).toBe("http://127.0.0.1:8080/health");

  const names = await listenerNames("web-sidecar-proxy", (n) => n.some((x) => x.startsWith("exposed_path_")));
  expect(names.filter((n) => n.startsWith("exposed_path_"))).toEqual([expect.stringMatching(/^exposed_path_health:.*:21500$/)]);
  expect(names).toContain("public_listener:0.0.0.0:21000");
}, 60_000);
