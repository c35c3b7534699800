import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { BadRequestError, DEFAULT_WAIT_MS, MAX_WAIT_MS, parseReadOptions, setQueryMeta, type ReadOptions } from "./query_options.ts";

/** Runs parseReadOptions on a request URL and returns the options or the 400 message. */
async function parse(query: string, random = () => 0): Promise<ReadOptions | string> {
  const app = new Hono();
  app.get("/x", (c) => {
    try {
      return c.json(parseReadOptions(c, random));
    } catch (err) {
      return c.text((err as BadRequestError).message, 400);
    }
  });
  const res = await app.request(`/x${query}`);
  return res.status === 400 ? res.text() : res.json();
}

describe("parseReadOptions", () => {
  test("defaults: own datacenter, default consistency, not blocking", async () => {
    expect(await parse("")).toEqual({ datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 });
  });

  test("dc, stale and consistent", async () => {
    expect(await parse("?dc=dc2&stale")).toMatchObject({ datacenter: "dc2", consistency: "stale" });
    expect(await parse("?consistent=")).toMatchObject({ consistency: "consistent" });
    expect(await parse("?stale&consistent")).toBe("Cannot specify ?stale with ?consistent, conflicting semantics.");
  });

  test("index blocks for wait, defaulting to 5 minutes and clamped to 10, plus up to wait/16 of jitter", async () => {
    expect(await parse("?index=7&wait=2s")).toMatchObject({ minIndex: 7, maxWaitMs: 2000 });
    expect(await parse("?index=7")).toMatchObject({ maxWaitMs: DEFAULT_WAIT_MS });
    expect(await parse("?index=7&wait=1h")).toMatchObject({ maxWaitMs: MAX_WAIT_MS });
    expect(await parse("?index=7&wait=16s", () => 0.5)).toMatchObject({ maxWaitMs: 16_500 });
    // wait without index does not block (Consul only blocks when MinQueryIndex > 0).
    expect(await parse("?wait=2s")).toMatchObject({ minIndex: 0, maxWaitMs: 0 });
  });

  test("bad index and wait values are refused with Consul's messages", async () => {
    expect(await parse("?index=abc")).toBe("Invalid index");
    expect(await parse("?index=-1")).toBe("Invalid index");
    expect(await parse("?index=99999999999999999999")).toBe("Invalid index");
    expect(await parse("?index=1&wait=soon")).toBe("Invalid wait time");
  });
});

describe("setQueryMeta", () => {
  test("writes the three X-Consul headers, with an index of at least 1", async () => {
    const app = new Hono();
    app.get("/x", (c) => {
      setQueryMeta(c, { index: 0, knownLeader: true, lastContactMs: 12.6 });
      return c.text("ok");
    });
    const res = await app.request("/x");
    expect(res.headers.get("X-Consul-Index")).toBe("1");
    expect(res.headers.get("X-Consul-KnownLeader")).toBe("true");
    expect(res.headers.get("X-Consul-LastContact")).toBe("13");
  });
});
