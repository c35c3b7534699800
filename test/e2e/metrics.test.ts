/**
 * The agent's metrics read by real Prometheus tools (Debian's `prometheus` package, installed when
 * missing): a -dev agent with `telemetry { prometheus_retention_time }` takes N KV writes; then
 * - `/v1/agent/metrics?format=prometheus` (text 0.0.4) says `consul_kvs_apply_count N` and passes
 *   `promtool check metrics` with no parse error (only the lint remarks Consul's own names draw);
 * - a Prometheus server scrapes the agent (it asks for OpenMetrics, so that format is parsed by the real
 *   scraper) and its query API answers the same counts;
 * - `/v1/agent/metrics` answers Consul's JSON shape.
 * The gateway data plane's Envoy-style Prometheus stats pass the same parser. And `causeway monitor` (a child process) streams the agent's log lines from /v1/agent/monitor.
 * The processes are stopped by PID and their directories removed, also when an assertion fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { ensureDebianCommands } from "../harness/debian.ts";
import { GatewayStats } from "../../src/gateway/index.ts";

const root = join(import.meta.dir, "..", "..");
const cli = join(root, "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-metrics-"));
const children: ChildProcess[] = [];
const agents: AgentProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await Promise.all(agents.map((a) => a.stop()));
  rmSync(work, { recursive: true, force: true });
});

const WRITES = 25;
const DEV_PORTS = ["-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"];

/** promtool's remarks that come from Consul's names (camelCase, counters without `_total`), not from a format error. */
const NAMING_LINT = /counter metrics should have "_total" suffix|metric names should be written in 'snake_case' not 'camelCase'|non-histogram and non-summary metrics should not have "_count" suffix/;

describe("metrics and the log monitor of a running agent", () => {
  test("N KV writes: kvs.apply counts N in the text format, promtool parses it, a Prometheus server scrapes it", async () => {
    ensureDebianCommands({ prometheus: "prometheus", promtool: "prometheus" }, "the Prometheus metrics test");
    const config = join(work, "telemetry.json");
    writeFileSync(config, JSON.stringify({ telemetry: { prometheus_retention_time: "60s", disable_hostname: true } }));
    const agent = await startAgentProcess(process.execPath, [cli, "agent", "-dev", "-config-file", config, ...DEV_PORTS]);
    agents.push(agent);
    const http = agent.httpUrl;
    await poll(() => fetch(`${http}/v1/status/leader`).then((r) => r.json()), (v) => typeof v === "string" && v !== "", 15_000, "a leader");
    for (let i = 0; i < WRITES; i++) {
      const res = await fetch(`${http}/v1/kv/metrics/k${i}`, { method: "PUT", body: `v${i}` });
      expect(await res.json()).toBe(true);
    }

    const res = await fetch(`${http}/v1/agent/metrics?format=prometheus`);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(text).toContain(`\nconsul_kvs_apply_count ${WRITES}\n`);
    expect(Number(/\nconsul_raft_apply (\d+)\n/.exec(text)?.[1])).toBeGreaterThanOrEqual(WRITES);
    expect(text).toContain('consul_api_http_count{method="PUT",path="v1.kv._"} ' + WRITES);
    expect(text).toMatch(/\nconsul_runtime_alloc_bytes \d+/);

    const lint = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    const remarks = `${lint.stdout}${lint.stderr}`.split("\n").filter((l) => l.trim() !== "");
    expect(remarks.filter((l) => !NAMING_LINT.test(l))).toEqual([]);

    // A Prometheus server scraping the agent every second.
    const promPort = await freePort();
    const promConfig = join(work, "prometheus.yml");
    writeFileSync(promConfig, [
      "global:", "  scrape_interval: 1s", "scrape_configs:", "  - job_name: causeway", "    metrics_path: /v1/agent/metrics",
      "    params:", "      format: [prometheus]", "    static_configs:", `      - targets: ["${new URL(http).host}"]`, "",
    ].join("\n"));
    const prom = spawn("prometheus", [`--config.file=${promConfig}`, `--storage.tsdb.path=${join(work, "tsdb")}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: "ignore" });
    children.push(prom);
    const api = `http://127.0.0.1:${promPort}/api/v1`;
    type Target = { health: string; lastError: string };
    const targets = await poll(
      () => fetch(`${api}/targets`).then((r) => r.json() as Promise<{ data: { activeTargets: Target[] } }>),
      (v) => v.data.activeTargets.length === 1 && v.data.activeTargets[0]!.health !== "unknown",
      30_000, "Prometheus's first scrape",
    );
    expect(targets.data.activeTargets[0]).toMatchObject({ health: "up", lastError: "" });
    const value = async (q: string) => {
      const body = (await (await fetch(`${api}/query?query=${encodeURIComponent(q)}`)).json()) as { data: { result: { value: [number, string] }[] } };
      return body.data.result.map((r) => Number(r.value[1]));
    };
    expect(await value("consul_kvs_apply_count")).toEqual([WRITES]);
    // OpenMetrics was negotiated: the scraper stored the counter under its `_total` sample name.
    expect((await value("consul_raft_apply_total"))[0]).toBeGreaterThanOrEqual(WRITES);
    expect(await value('consul_api_http_count{method="PUT",path="v1.kv._"}')).toEqual([WRITES]);
    prom.kill("SIGTERM");

    const json = (await (await fetch(`${http}/v1/agent/metrics`)).json()) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(["Timestamp", "Gauges", "Points", "Counters", "Samples"]);
    expect(json.Timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d0 \+0000 UTC$/);
    expect(await (await fetch(`${http}/v1/agent/metrics?format=prometheus`, { headers: { accept: "application/openmetrics-text; version=1.0.0" } })).text()).toEndWith("# EOF\n");
  }, 120_000);

  test("the gateway's /stats/prometheus (Envoy's form: TYPE lines only) parses with promtool", () => {
    ensureDebianCommands({ promtool: "prometheus" }, "the Prometheus metrics test");
    const stats = new GatewayStats();
    const tcp = { kind: "tcp", name: "mesh_gateway_local.dc2" } as const;
    const cluster = { kind: "cluster", name: 'web.default.dc2.internal.1c2d.consul "q"' } as const;
    stats.counter(tcp, "downstream_cx_total").add(4);
    stats.counter(tcp, "downstream_cx_rx_bytes_total").add(1024);
    stats.gauge({ kind: "listener", name: "0.0.0.0_8443" }, "downstream_cx_active").add(2);
    stats.counter(cluster, "upstream_cx_total").add(3);
    stats.gauge({ kind: "server" }, "total_connections").add(2);
    const lint = spawnSync("promtool", ["check", "metrics"], { input: stats.prometheus(), encoding: "utf8" });
    const remarks = `${lint.stdout}${lint.stderr}`.split("\n").filter((l) => l.trim() !== "");
    expect(remarks.filter((l) => !/no help text/.test(l))).toEqual([]);
  });

  test("causeway monitor streams the agent's lines as they happen and stops on SIGINT", async () => {
    const agent = await startAgentProcess(process.execPath, [cli, "agent", "-dev", ...DEV_PORTS]);
    agents.push(agent);
    const monitor = spawn(process.execPath, [cli, "monitor", `-http-addr=${agent.httpUrl}`, "-log-level=debug"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(monitor);
    let out = "";
    monitor.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    monitor.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => monitor.on("exit", (code) => resolve(code)));
    // Each registration's sync logs "synced service"; register until one arrives after the monitor attached.
    let n = 0;
    await poll(async () => {
      await fetch(`${agent.httpUrl}/v1/agent/service/register`, { method: "PUT", body: JSON.stringify({ Name: `web-${n++}` }) });
      return out;
    }, (o) => /\[INFO\] agent[.\w]*: synced service service=web-\d+/.test(o), 20_000, "a 'synced service' line from the monitor");
    monitor.kill("SIGINT");
    expect(await exited).toBe(0);
  }, 60_000);
});
