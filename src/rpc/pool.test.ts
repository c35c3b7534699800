import { afterAll, describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { PingResponseSchema, Status } from "../gen/causeway/status/v1/status_pb.ts";
import { createGrpcServer, dialTcp, seededRng, silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { NoPathError } from "./errors.ts";
import { createRpcPool, type RpcTarget } from "./pool.ts";

const grpc = createGrpcServer({ routes: (r) => r.service(Status, { ping: () => create(PingResponseSchema, { node: "n1", datacenter: "dc1" }) } as never), logger: silentLogger() });
const listening = grpc.listen({ host: "127.0.0.1", port: 0 });
afterAll(async () => grpc.close());

describe("rpc pool", () => {
  test("one connection per target, reused across calls", async () => {
    const { port } = await listening;
    let dials = 0;
    const pool = createRpcPool({ dial: () => (dials++, dialTcp({ host: "127.0.0.1", port })), clock: simClock(), rng: seededRng(1), logger: silentLogger() });
    const status = createClient(Status, pool.transport({ datacenter: "dc1", node: "n1" }));
    for (let i = 0; i < 5; i++) expect((await status.ping({})).node).toBe("n1");
    await Promise.all(Array.from({ length: 20 }, () => status.ping({})));
    expect(dials).toBe(1);
    expect(pool.connections()).toBe(1);
    pool.close();
  });

  test("retire closes the selected targets' connections gracefully; their next call dials again, others keep theirs", async () => {
    const { port } = await listening;
    const dialed: string[] = [];
    const pool = createRpcPool({ dial: (t) => (dialed.push(t.datacenter), dialTcp({ host: "127.0.0.1", port })), clock: simClock(), rng: seededRng(3), logger: silentLogger() });
    const local = createClient(Status, pool.transport({ datacenter: "dc1" }));
    const remote = createClient(Status, pool.transport({ datacenter: "dc2" }));
    await Promise.all([local.ping({}), remote.ping({})]);
    // A call started as its connection is retired still completes.
    const during = remote.ping({});
    expect(pool.retire((t) => t.datacenter !== "dc1")).toBe(1);
    expect((await during).node).toBe("n1");
    await Promise.all([local.ping({}), remote.ping({})]);
    expect(dialed.sort()).toEqual(["dc1", "dc2", "dc2"]);
    expect(pool.retire((t) => t.datacenter === "dc3")).toBe(0);
    pool.close();
  });

  test("failed dials back off: calls fail fast as Unavailable until the delay has passed, then reconnect", async () => {
    const { port } = await listening;
    const clock = simClock();
    let failing = true;
    const dialed: RpcTarget[] = [];
    const pool = createRpcPool({
      dial: (t) => {
        dialed.push(t);
        return failing ? Promise.reject(new Error("connection refused")) : dialTcp({ host: "127.0.0.1", port });
      },
      clock, rng: seededRng(2), logger: silentLogger(), backoffBaseMs: 100, backoffMaxMs: 1000,
    });
    const status = createClient(Status, pool.transport({ datacenter: "dc1" }));
    const code = (p: Promise<unknown>) => p.then(() => "ok", (e) => ConnectError.from(e).code);
    expect(await code(status.ping({}))).toBe(Code.Unavailable);
    expect(await code(status.ping({}))).toBe(Code.Unavailable); // inside the backoff: no new dial
    expect(dialed.length).toBe(1);
    failing = false;
    clock.advance(100); // at least base * 0.5 .. base
    expect(await code(status.ping({}))).toBe("ok");
    expect(dialed.length).toBe(2);
    pool.close();
  });

  test("a backing-off call says why the last dial failed", async () => {
    const pool = createRpcPool({ dial: () => Promise.reject(new Error("connection refused")), clock: simClock(), rng: seededRng(7), logger: silentLogger() });
    const message = () => createClient(Status, pool.transport({ datacenter: "dc2" })).ping({}).then(() => "ok", (e) => ConnectError.from(e).rawMessage);
    expect(await message()).toBe("*.dc2: connection refused");
    expect(await message()).toMatch(/^\*\.dc2: reconnecting in \d+ ms after 1 failed dials \(last: connection refused\)$/);
    pool.close();
  });

  test("no path to the datacenter (a NoPathError): every call fails at once with that message, and asks again, with no backoff", async () => {
    const { port } = await listening;
    const clock = simClock();
    let gateway = false;
    let dials = 0;
    const pool = createRpcPool({
      dial: (t) => (dials++, gateway ? dialTcp({ host: "127.0.0.1", port }) : Promise.reject(new NoPathError(`no path to datacenter ${t.datacenter}: no healthy mesh gateway`))),
      clock, rng: seededRng(8), logger: silentLogger(),
    });
    const status = createClient(Status, pool.transport({ datacenter: "dc3" }));
    for (let i = 0; i < 3; i++) {
      const err = await status.ping({}).then(() => undefined, (e) => ConnectError.from(e));
      expect([err?.code, err?.rawMessage]).toEqual([Code.Unavailable, "no path to datacenter dc3: no healthy mesh gateway"]);
    }
    expect(dials).toBe(3);
    // A gateway becomes usable: the very next call connects, no time has to pass.
    gateway = true;
    expect((await status.ping({})).node).toBe("n1");
    expect(dials).toBe(4);
    pool.close();
  });

  test("an idle connection is closed after the idle timeout; the next call reconnects", async () => {
    const { port } = await listening;
    const clock = simClock();
    let dials = 0;
    const pool = createRpcPool({ dial: () => (dials++, dialTcp({ host: "127.0.0.1", port })), clock, rng: seededRng(3), logger: silentLogger(), idleTimeoutMs: 10_000 });
    const status = createClient(Status, pool.transport({ datacenter: "dc1", node: "n1" }));
    await status.ping({});
    expect(pool.connections()).toBe(1);
    // The finished stream's 'close' event arrives a turn after its response.
    await new Promise((r) => setTimeout(r, 10));
    clock.advance(5_000);
    expect(pool.connections()).toBe(1);
    clock.advance(10_000);
    expect(pool.connections()).toBe(0);
    await status.ping({});
    expect(dials).toBe(2);
    pool.close();
  });

  test("targets that are no longer used are forgotten after the idle timeout: no growth with distinct names", async () => {
    const { port } = await listening;
    const clock = simClock();
    const pool = createRpcPool({
      dial: (t) => (t.datacenter === "dc1" ? dialTcp({ host: "127.0.0.1", port }) : Promise.reject(new Error(`no server known in ${t.datacenter}`))),
      clock, rng: seededRng(5), logger: silentLogger(), idleTimeoutMs: 10_000,
    });
    const code = (p: Promise<unknown>) => p.then(() => "ok", (e) => ConnectError.from(e).code);
    for (let i = 0; i < 50; i++) expect(await code(createClient(Status, pool.transport({ datacenter: `gone-${i}` })).ping({}))).toBe(Code.Unavailable);
    const kept = createClient(Status, pool.transport({ datacenter: "dc1", node: "n1" }));
    await kept.ping({});
    expect(pool.targets()).toBe(51);
    await new Promise((r) => setTimeout(r, 10));
    clock.advance(10_000);
    clock.advance(10_000);
    // The failed ones are gone; the idle connection was closed, then forgotten too.
    expect([pool.targets(), pool.connections()]).toEqual([0, 0]);
    // A client holding an evicted target's transport still works: the target comes back.
    expect((await kept.ping({})).node).toBe("n1");
    expect([pool.targets(), pool.connections()]).toEqual([1, 1]);
    pool.close();
  });

  test("no target name can make the connection's URL invalid", async () => {
    const { port } = await listening;
    const pool = createRpcPool({ dial: () => dialTcp({ host: "127.0.0.1", port }), clock: simClock(), rng: seededRng(6), logger: silentLogger() });
    for (const node of ["a b", "x/y?z#w", "ünï", "a:b@c"]) expect((await createClient(Status, pool.transport({ datacenter: "d c", node })).ping({})).node).toBe("n1");
    pool.close();
  });

  test("a closed pool refuses calls", async () => {
    const pool = createRpcPool({ dial: () => Promise.reject(new Error("unused")), clock: simClock(), rng: seededRng(4), logger: silentLogger() });
    pool.close();
    await expect(createClient(Status, pool.transport({ datacenter: "dc1" })).ping({}).catch((e) => ConnectError.from(e).rawMessage)).resolves.toBe("rpc pool closed");
  });
});
