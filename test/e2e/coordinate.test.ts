/**
 * Network coordinates end to end: a server and a client agent on loopback gossip, measure each other,
 * and each sends its LAN coordinate to the catalog (sync_coordinate_interval_min shortened to 1 s, the
 * servers' coordinate_update_period to 500 ms); /v1/coordinate/nodes then lists both, `?near` sorts by
 * them, `causeway rtt` estimates between them, and /v1/coordinate/datacenters has the server's WAN one,
 * on the client agent too (asked of the server over RPC, as Consul's clients forward it).
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-coordinates-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

// deno-lint-ignore no-explicit-any
const getJson = async (a: AgentProcess, path: string) => (await fetch(`${a.httpUrl}${path}`)).json() as Promise<any>;

test("both agents' LAN coordinates reach the catalog; near, rtt and the WAN map use them", async () => {
  const config = join(work, "coordinates.json");
  writeFileSync(config, JSON.stringify({ sync_coordinate_interval_min: "1s", coordinate_update_period: "500ms" }));
  const serverLan = await freePort();
  const common = ["-config-file", config, "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-wan-port", "0"];
  const server = await startAgentProcess(process.execPath, [
    cli, "agent", "-server", "-bootstrap-expect", "1", "-node", "srv", "-data-dir", join(work, "srv"), "-server-port", "0", "-serf-lan-port", String(serverLan), ...common,
  ]);
  running.push(server);
  const client = await startAgentProcess(process.execPath, [
    cli, "agent", "-node", "cli", "-data-dir", join(work, "cli"), "-serf-lan-port", "0", "-retry-join", `127.0.0.1:${serverLan}`, "-retry-interval", "1s", ...common,
  ]);
  running.push(client);

  const coords = await poll(() => getJson(client, "/v1/coordinate/nodes"), (c) => Array.isArray(c) && c.length === 2, 60_000, "coordinates of both nodes");
  expect(coords.map((c: { Node: string; Segment: string }) => [c.Node, c.Segment])).toEqual([["cli", ""], ["srv", ""]]);
  for (const c of coords) expect(c.Coord.Vec).toHaveLength(8);
  const one = await getJson(server, "/v1/coordinate/node/cli");
  expect(one).toEqual([coords[0]]);
  expect((await fetch(`${server.httpUrl}/v1/coordinate/node/nobody`)).status).toBe(404);

  // The local agent's own coordinate, and the catalog sorted near each node: itself first.
  expect((await getJson(client, "/v1/agent/self")).Coord.Vec).toHaveLength(8);
  expect((await getJson(client, "/v1/catalog/nodes?near=_agent")).map((n: { Node: string }) => n.Node)).toEqual(["cli", "srv"]);
  expect((await getJson(client, "/v1/catalog/nodes?near=srv")).map((n: { Node: string }) => n.Node)).toEqual(["srv", "cli"]);

  const rtt = spawnSync(process.execPath, [cli, "rtt", "-http-addr", client.httpUrl, "srv"], { encoding: "utf8" });
  expect(rtt.stderr).toBe("");
  expect(rtt.stdout).toMatch(/^Estimated srv <-> cli rtt: \d+\.\d{3} ms \(using LAN coordinates\)\n$/);

  type Map = { Datacenter: string; AreaID: string; Coordinates: { Node: string; Coord: { Vec: number[] } }[] };
  const shape = (maps: Map[]) => maps.map((m) => [m.Datacenter, m.AreaID, m.Coordinates.map((c) => [c.Node, c.Coord.Vec.length])]);
  const wan: Map[] = await getJson(server, "/v1/coordinate/datacenters");
  expect(shape(wan)).toEqual([["dc1", "wan", [["srv", 8]]]]);
  const fromClient = await fetch(`${client.httpUrl}/v1/coordinate/datacenters`);
  expect(fromClient.status).toBe(200);
  expect(shape(await fromClient.json() as Map[])).toEqual(shape(wan));
  const wanRtt = spawnSync(process.execPath, [cli, "rtt", "-wan", "-http-addr", client.httpUrl, "srv.dc1", "srv.dc1"], { encoding: "utf8" });
  expect(wanRtt.stderr).toBe("");
  expect(wanRtt.stdout).toMatch(/^Estimated srv\.dc1 <-> srv\.dc1 rtt: \d+\.\d{3} ms \(using WAN coordinates\)\n$/);
  expect(await getJson(server, "/v1/catalog/datacenters")).toEqual(["dc1"]);
}, 90_000);
