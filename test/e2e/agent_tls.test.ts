/**
 * A server agent with TLS on its server port, set up the way an operator would: certificates from
 * `causeway tls`, Consul's TLS settings in a config file. openssl negotiates ALPN causeway/rpc with a
 * client certificate; without one it is refused.
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const root = join(import.meta.dir, "..", "..");
const cli = join(root, "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-agent-tls-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function causeway(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: work, encoding: "utf8" });
  expect(r.status).toBe(0);
  return r.stdout;
}

/** In TLS 1.3 a client finishes its handshake before the server checks its certificate; 1.2 shows the refusal in the handshake. */
function sClient(port: number, withClientCert: boolean, version = "-tls1_3") {
  const args = ["s_client", version, "-connect", `127.0.0.1:${port}`, "-alpn", "causeway/rpc", "-servername", "server.dc1.consul", "-CAfile", join(work, "consul-agent-ca.pem"), "-verify_hostname", "server.dc1.consul"];
  if (withClientCert) args.push("-cert", join(work, "dc1-client-consul-0.pem"), "-key", join(work, "dc1-client-consul-0-key.pem"));
  return spawnSync("openssl", args, { input: "", encoding: "utf8", timeout: 10_000 });
}

test("a TLS server agent negotiates ALPN causeway/rpc with openssl and refuses clients without a certificate", async () => {
  causeway("tls", "ca", "create");
  causeway("tls", "cert", "create", "-server", "-node", "n1");
  causeway("tls", "cert", "create", "-client");
  writeFileSync(join(work, "server.json"), JSON.stringify({
    server: true, bootstrap_expect: 1, node_name: "n1", data_dir: join(work, "data"), bind_addr: "127.0.0.1",
    ports: { http: 0, grpc: -1, server: 0, serf_lan: 0, serf_wan: 0, dns: -1 },
    ca_file: join(work, "consul-agent-ca.pem"), cert_file: join(work, "dc1-server-consul-0.pem"), key_file: join(work, "dc1-server-consul-0-key.pem"),
    verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true,
  }));
  const agent = await startAgentProcess(process.execPath, [cli, "agent", "-config-file", join(work, "server.json")]);
  try {
    const serverAddr = /Cluster Addr: (\S+)/.exec(agent.output())![1]!;
    const port = Number(serverAddr.split(":")[1]);
    let leader = "";
    for (let i = 0; i < 200 && leader === ""; i++) {
      leader = (await (await fetch(`${agent.httpUrl}/v1/status/leader`)).json()) as string;
      if (leader === "") await Bun.sleep(25);
    }
    expect(leader).toBe(serverAddr);

    const ok = sClient(port, true);
    expect(ok.stdout).toContain("ALPN protocol: causeway/rpc");
    expect(ok.stdout).toContain("Verify return code: 0 (ok)");

    const refused = sClient(port, false, "-tls1_2");
    expect(refused.stdout + refused.stderr).toMatch(/alert handshake failure|certificate required/i);
  } finally {
    expect(await agent.stop()).toBe(0);
  }
  expect(agent.output()).toMatch(/connection refused.*remote=127\.0\.0\.1:\d+/);
}, 60_000);

test("a server certificate for another datacenter stops the agent at start with a clear error", () => {
  writeFileSync(join(work, "dc2.json"), JSON.stringify({
    server: true, datacenter: "dc2", node_name: "n2", data_dir: join(work, "data2"), ports: { http: 0, grpc: -1, server: 0, serf_lan: 0, serf_wan: 0, dns: -1 },
    ca_file: join(work, "consul-agent-ca.pem"), cert_file: join(work, "dc1-server-consul-0.pem"), key_file: join(work, "dc1-server-consul-0-key.pem"),
  }));
  const r = spawnSync(process.execPath, [cli, "agent", "-config-file", join(work, "dc2.json")], { encoding: "utf8", timeout: 20_000 });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("must name server.dc2.consul to serve as a server certificate");
});

/**
 * Servers dial each other checking `server.dc1.consul` only, as Consul does: certificates made without
 * -node (the Consul documentation's way), or for another node name, still form a cluster.
 */
test("three TLS servers with verify_server_hostname form a cluster over raft; a client certificate is refused raft", async () => {
  causeway("tls", "cert", "create", "-server");
  causeway("tls", "cert", "create", "-server");
  const joinPort = await freePort();
  const agents: AgentProcess[] = [];
  try {
    for (const i of [0, 1, 2]) {
      const config = join(work, `raft-${i}.json`);
      writeFileSync(config, JSON.stringify({
        server: true, bootstrap_expect: 3, node_name: `r${i}`, data_dir: join(work, `raft-data-${i}`), bind_addr: "127.0.0.1",
        ports: { http: 0, grpc: -1, server: 0, serf_lan: i === 0 ? joinPort : 0, serf_wan: -1, dns: -1 },
        ...(i === 0 ? {} : { retry_join: [`127.0.0.1:${joinPort}`], retry_interval: "1s" }),
        ca_file: join(work, "consul-agent-ca.pem"), cert_file: join(work, `dc1-server-consul-${i}.pem`), key_file: join(work, `dc1-server-consul-${i}-key.pem`),
        verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true,
      }));
      agents.push(await startAgentProcess(process.execPath, [cli, "agent", "-config-file", config]));
    }
    const status = async (path: string) => (await (await fetch(`${agents[2]!.httpUrl}${path}`)).json()) as string | string[];
    await poll(() => status("/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 60_000, "three raft peers").catch((err) => {
      console.log(agents.map((a) => a.output()).join("\n=====\n").slice(-6000));
      throw err;
    });
    // A write through the third server commits on a quorum: raft replicates between the servers' certificates.
    expect((await fetch(`${agents[2]!.httpUrl}/v1/kv/raft-tls`, { method: "PUT", body: "ok" })).status).toBe(200);
    expect(await (await fetch(`${agents[0]!.httpUrl}/v1/kv/raft-tls?raw&consistent`)).text()).toBe("ok");

    const port = Number(/Cluster Addr: \S+:(\d+)/.exec(agents[0]!.output())![1]);
    spawnSync("openssl", [
      "s_client", "-tls1_3", "-connect", `127.0.0.1:${port}`, "-alpn", "causeway/raft", "-servername", "server.dc1.consul",
      "-CAfile", join(work, "consul-agent-ca.pem"), "-cert", join(work, "dc1-client-consul-0.pem"), "-key", join(work, "dc1-client-consul-0-key.pem"),
    ], { input: "x", encoding: "utf8", timeout: 10_000 });
    await poll(async () => agents[0]!.output(), (o) => o.includes("raft needs the certificate of a server of this datacenter (server.dc1.consul)"), 10_000, "the raft refusal");
  } finally {
    for (const a of agents) await a.stop("SIGKILL").catch(() => {});
  }
}, 120_000);
