/**
 * POST /v1/operator/raft/transfer-leader end to end in one process: the HTTP API, operatorApiOver, the
 * Operator service (forwarded from a follower to the leader) and real consensus nodes over the
 * simulated network and clock, so every run is the same.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createRouterTransport, type ConnectRouter, type Transport } from "@connectrpc/connect";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { simNetwork, type SimNetwork } from "../../test/harness/sim_network.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { kvStateMachine, type KvResult } from "../../test/harness/kv_state_machine.ts";
import { createConsensusNode, type ConsensusNode } from "../consensus/index.ts";
import { createHttpApi, type AgentInfo } from "../http/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { registerStatusServices, type RpcContext, type RpcPool } from "../rpc/index.ts";
import { runCommand } from "../../test/harness/cli_agent.ts";
import { createOperatorCommand } from "./commands/operator.ts";
import { operatorApiOver } from "./operator_api.ts";

const SEED = 7;
const agent = { datacenter: "dc1", nodeName: "agent", server: true } as AgentInfo;

interface Cluster {
  readonly clock: SimClock;
  readonly net: SimNetwork;
  readonly nodes: ReadonlyMap<string, ConsensusNode<KvResult>>;
  /** The HTTP API of an agent whose operator calls go to server `id` (in process, as on a server). */
  http(id: string): ReturnType<typeof createHttpApi>;
  leader(): string;
  stop(): Promise<void>;
}

let running: Cluster | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** `ids` bootstrapped as voters of dc1 on one simulated network; resolves once they agree on a leader. */
async function cluster(ids: readonly string[], o: { timeoutMs?: number; leadership?: boolean } = {}): Promise<Cluster> {
  const clock = simClock();
  const rng = seededRng(SEED);
  const net = simNetwork(clock, rng);
  const nodes = new Map<string, ConsensusNode<KvResult>>();
  const routes = new Map<string, (r: ConnectRouter) => void>();
  const transports = new Map<string, Transport>();
  for (const id of ids) {
    const node = createConsensusNode({
      id, clock, rng: seededRng(SEED * 31 + nodes.size), logger: silentLogger(), log: memoryLogStore(), transport: net.transport(id),
      stateMachine: kvStateMachine(), bootstrapVoters: ids, tickMs: 10,
    });
    nodes.set(id, node);
    const pool: RpcPool = {
      transport: (target) => {
        const t = target.node ? transports.get(target.node) : undefined;
        if (!t) throw new Error(`no server ${target.node} in ${target.datacenter}`);
        return t;
      },
      connections: () => 0,
      targets: () => 0,
      retire: () => 0,
      close: () => {},
    };
    const ctx: RpcContext = {
      datacenter: "dc1",
      node: id,
      raft: node,
      servers: { lookup: (raftId) => (nodes.has(raftId) ? { node: raftId, address: `10.0.0.${ids.indexOf(raftId) + 1}:8300` } : undefined) },
      pool,
    };
    const register = (r: ConnectRouter) => registerStatusServices(r, ctx, o.leadership === false ? undefined : { node, clock, timeoutMs: o.timeoutMs });
    routes.set(id, register);
    transports.set(id, createRouterTransport(register));
  }
  for (const n of nodes.values()) await n.start();
  const leader = () => [...nodes.values()].find((n) => n.status().role === "Leader")?.status().id ?? "";
  const agreed = () => leader() !== "" && [...nodes.values()].every((n) => n.status().leader === leader());
  if (!(await runSimTimers(clock, 5_000, agreed))) throw new Error(`no leader agreed on (seed ${SEED})`);
  return {
    clock,
    net,
    nodes,
    leader,
    http: (id) => createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, operator: operatorApiOver(() => transports.get(id)!) }),
    async stop() {
      for (const n of nodes.values()) await n.stop();
    },
  };
}

/** Runs simulated time until `p` settles; its value (or rejection). */
async function settle<T>(c: Cluster, p: Promise<T>, what: string): Promise<T> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  if (!(await runSimTimers(c.clock, 20_000, () => done))) throw new Error(`${what} did not finish (seed ${SEED})`);
  return p;
}

/** Sends `path` as POST to `id`'s HTTP API and runs simulated time until the answer is in. */
async function post(c: Cluster, id: string, path: string): Promise<[number, string]> {
  const res = await settle(c, Promise.resolve(c.http(id).request(path, { method: "POST" })), `POST ${path}`);
  return [res.status, await res.text()];
}

/** `causeway operator raft transfer-leader ...args` against `id`'s HTTP API (in process, no sockets). */
function cli(c: Cluster, id: string, args: string[]) {
  const app = c.http(id);
  const operator = createOperatorCommand({ env: () => ({}), fetch: async (url, init) => app.request(url, init), readStdin: async () => new Uint8Array() });
  return settle(c, runCommand(operator, ["raft", "transfer-leader", ...args]), `transfer-leader ${args.join(" ")}`);
}

describe("POST /v1/operator/raft/transfer-leader", () => {
  test("without ?id leadership moves to another voter and every server follows it", async () => {
    const c = (running = await cluster(["s1", "s2", "s3"]));
    const before = c.leader();
    const follower = [...c.nodes.keys()].find((id) => id !== before)!;
    // Asked at a follower: forwarded to the leader, which answers once the new leader is known.
    expect(await post(c, follower, "/v1/operator/raft/transfer-leader")).toEqual([200, '{"Success":true}']);
    const after = c.nodes.get(before)!.status().leader;
    expect(after).not.toBe("");
    expect(after).not.toBe(before);
    expect(c.nodes.get(after)!.status().role).toBe("Leader");
    expect(c.nodes.get(before)!.status().role).toBe("Follower");
  });

  test("with ?id the named voter becomes the leader, asked at the leader itself", async () => {
    const c = (running = await cluster(["s1", "s2", "s3"]));
    for (let round = 0; round < 2; round++) {
      const before = c.leader();
      const target = [...c.nodes.keys()].filter((id) => id !== before).sort()[round]!;
      expect(await post(c, before, `/v1/operator/raft/transfer-leader?id=${target}`)).toEqual([200, '{"Success":true}']);
      expect(c.nodes.get(before)!.status().leader).toBe(target);
      expect(c.nodes.get(target)!.status().role).toBe("Leader");
    }
  });

  test("an unknown id or the leader's own id is 400 and leaves the leader in place", async () => {
    const c = (running = await cluster(["s1", "s2", "s3"]));
    const leader = c.leader();
    const term = c.nodes.get(leader)!.status().term;
    expect(await post(c, leader, "/v1/operator/raft/transfer-leader?id=nope")).toEqual([400, "Could not find address for server id nope\n"]);
    expect(await post(c, leader, `/v1/operator/raft/transfer-leader?id=${leader}`)).toEqual([400, "cannot transfer leadership to itself\n"]);
    expect(c.leader()).toBe(leader);
    expect(c.nodes.get(leader)!.status().term).toBe(term);
  });

  test("a transferee that cannot take over: 500 saying the transfer timed out, the old leader stays", async () => {
    const c = (running = await cluster(["s1", "s2", "s3"], { timeoutMs: 1_000 }));
    const leader = c.leader();
    const [target, other] = [...c.nodes.keys()].filter((id) => id !== leader) as [string, string];
    c.net.partition([[leader, other], [target]]);
    const [status, body] = await post(c, leader, `/v1/operator/raft/transfer-leader?id=${target}`);
    expect(status).toBe(500);
    expect(body).toBe(`leadership transfer timeout: no new leader within 1000 ms (transferee ${target})\n`);
    expect(c.leader()).toBe(leader);
  });

  test("a single server has no peer to hand leadership to (Consul's \"cannot find peer\")", async () => {
    const c = (running = await cluster(["s1"]));
    expect(await post(c, "s1", "/v1/operator/raft/transfer-leader")).toEqual([500, "cannot find peer\n"]);
    expect(c.leader()).toBe("s1");
  });

  test("the CLI verb: Success and the named leader, or exit 1 with the server's refusal", async () => {
    const c = (running = await cluster(["s1", "s2", "s3"]));
    const before = c.leader();
    const target = [...c.nodes.keys()].find((id) => id !== before)!;
    expect(await cli(c, before, [`-id=${target}`])).toEqual({ code: 0, out: "Success\n", err: "" });
    expect(c.nodes.get(before)!.status().leader).toBe(target);
    expect(await cli(c, target, ["-id=nope"])).toEqual({
      code: 1, out: "", err: "Error transfering leadership: Failed to transfer leadership Unexpected response code: 400 (Could not find address for server id nope)\n",
    });
    expect(c.leader()).toBe(target);
  });

  test("a server without the leadership wiring refuses; other methods are 405", async () => {
    const c = (running = await cluster(["s1"], { leadership: false }));
    expect(await post(c, "s1", "/v1/operator/raft/transfer-leader")).toEqual([500, "leadership transfer is not available on this server\n"]);
    const res = await c.http("s1").request("/v1/operator/raft/transfer-leader", { method: "PUT" });
    expect([res.status, await res.text()]).toEqual([405, "method PUT not allowed\n"]);
  });
});
