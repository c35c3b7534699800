import { describe, expect, test } from "bun:test";
import { parseServiceRegistration } from "../agent/index.ts";
import { apiWith, fakeAgent, flush, realAgent, type RealKit } from "./agent_local_kit.test.ts";

// Hash-based blocking on GET /v1/agent/service/:id (Consul's Agent.LocalBlockingQuery) over the real
// local agent and a simulated clock.

function setup(random = () => 0) {
  const kit = realAgent();
  kit.agent.registerService(parseServiceRegistration({ Name: "web", Port: 80, Tags: ["a"], Check: { TTL: "30s" } }));
  const app = apiWith(kit.api, { clock: kit.clock, random });
  return { ...kit, app };
}

async function currentHash(app: ReturnType<typeof apiWith>): Promise<string> {
  const res = await app.request("/v1/agent/service/web");
  const hash = res.headers.get("x-consul-contenthash")!;
  expect(((await res.json()) as { ContentHash: string }).ContentHash).toBe(hash);
  return hash;
}

/** Starts a request and reports whether it has answered yet. */
function start(app: ReturnType<typeof apiWith>, path: string, init?: RequestInit) {
  let answered: Response | undefined;
  const done = Promise.resolve(app.request(path, init)).then((res) => (answered = res));
  return { done, answered: () => answered };
}

const retag = (k: RealKit, tags: string[]) =>
  k.agent.registerService(parseServiceRegistration({ Name: "web", Port: 80, Tags: tags, Check: { TTL: "30s" } }));

describe("hash-based blocking", () => {
  test("answers at once without ?hash or with a different hash", async () => {
    const { app, clock } = setup();
    const hash = await currentHash(app);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    const timers = clock.pending();
    const other = await app.request("/v1/agent/service/web?hash=0000&wait=1m");
    expect(other.status).toBe(200);
    expect(other.headers.get("x-consul-contenthash")).toBe(hash);
    expect(clock.pending()).toBe(timers); // no wait timer was armed
  });

  test("blocks while the hash is unchanged and answers the new service when it changes", async () => {
    const k = setup();
    const hash = await currentHash(k.app);
    const req = start(k.app, `/v1/agent/service/web?hash=${hash}&wait=10s`);
    await flush();
    k.clock.advance(5_000);
    await flush();
    expect(req.answered()).toBeUndefined();
    retag(k, ["b"]);
    const res = await req.done;
    expect(res.status).toBe(200);
    const body = (await res.json()) as { Tags: string[]; ContentHash: string };
    expect(body.Tags).toEqual(["b"]);
    expect(body.ContentHash).not.toBe(hash);
    expect(res.headers.get("x-consul-contenthash")).toBe(body.ContentHash);
  });

  test("a change that leaves the service as it was keeps waiting (check status, re-registration)", async () => {
    const k = setup();
    const hash = await currentHash(k.app);
    const req = start(k.app, `/v1/agent/service/web?hash=${hash}&wait=10s`);
    await flush();
    k.agent.updateTTL("service:web", "passing", "ok");
    retag(k, ["a"]);
    await flush();
    expect(req.answered()).toBeUndefined();
    k.clock.advance(10_000);
    const res = await req.done;
    expect(res.headers.get("x-consul-contenthash")).toBe(hash);
  });

  test("times out at ?wait (plus jitter) and answers the unchanged service", async () => {
    const k = setup(() => 0.5);
    const hash = await currentHash(k.app);
    const req = start(k.app, `/v1/agent/service/web?hash=${hash}&wait=16s`);
    await flush();
    k.clock.advance(16_499);
    await flush();
    expect(req.answered()).toBeUndefined();
    k.clock.advance(1); // 16 s + 0.5 * 16 s / 16
    const res = await req.done;
    expect(res.status).toBe(200);
    expect(res.headers.get("x-consul-contenthash")).toBe(hash);
  });

  test("the wait defaults to 5 minutes and is capped at 10", async () => {
    for (const [query, ms] of [["", 300_000], ["&wait=1h", 600_000]] as const) {
      const k = setup();
      const hash = await currentHash(k.app);
      const req = start(k.app, `/v1/agent/service/web?hash=${hash}${query}`);
      await flush();
      k.clock.advance(ms - 1);
      await flush();
      expect([query, req.answered()]).toEqual([query, undefined]);
      k.clock.advance(1);
      expect((await req.done).status).toBe(200);
    }
  });

  test("a service removed while waiting answers 404", async () => {
    const k = setup();
    const hash = await currentHash(k.app);
    const req = start(k.app, `/v1/agent/service/web?hash=${hash}&wait=10s`);
    await flush();
    k.agent.deregisterService("web");
    const res = await req.done;
    expect([res.status, await res.text()]).toEqual([404, "unknown service ID: web"]);
  });

  test("a client that goes away stops the wait and leaves no timer or listener behind", async () => {
    const { api, listeners } = fakeAgent({ agentService: () => ({ ID: "web", Service: "web", ContentHash: "h" }) });
    const k = realAgent();
    const app = apiWith(api, { clock: k.clock });
    const abort = new AbortController();
    const req = start(app, "/v1/agent/service/web?hash=h&wait=1m", { signal: abort.signal });
    await flush();
    expect([listeners.size, k.clock.pending()]).toEqual([1, 1]);
    abort.abort();
    await req.done.catch(() => undefined);
    await flush();
    expect([listeners.size, k.clock.pending()]).toEqual([0, 0]);
  });

  test("without a clock the HTTP layer cannot wait and answers at once", async () => {
    const { api } = fakeAgent({ agentService: () => ({ ID: "web", Service: "web", ContentHash: "h" }) });
    const res = await apiWith(api).request("/v1/agent/service/web?hash=h&wait=1m");
    expect([res.status, res.headers.get("x-consul-contenthash")]).toEqual([200, "h"]);
  });
});
