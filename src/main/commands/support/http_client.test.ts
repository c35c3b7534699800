import { describe, expect, test } from "bun:test";
import { AgentHttpError, createAgentHttpClient, DEFAULT_HTTP_ADDR, resolveHttpAddr } from "./http_client.ts";

describe("resolveHttpAddr", () => {
  test("flag, then CAUSEWAY_HTTP_ADDR, then CONSUL_HTTP_ADDR, then the default", () => {
    const env = { CAUSEWAY_HTTP_ADDR: "http://10.0.0.1:8500", CONSUL_HTTP_ADDR: "http://10.0.0.2:8500" };
    expect(resolveHttpAddr("http://10.0.0.3:8500", env)).toBe("http://10.0.0.3:8500");
    expect(resolveHttpAddr(undefined, env)).toBe("http://10.0.0.1:8500");
    expect(resolveHttpAddr(undefined, { CAUSEWAY_HTTP_ADDR: "", CONSUL_HTTP_ADDR: "http://10.0.0.2:8500" })).toBe("http://10.0.0.2:8500");
    expect(resolveHttpAddr(undefined, {})).toBe(DEFAULT_HTTP_ADDR);
  });

  test("an address without a scheme is http; https is kept; a trailing slash is dropped", () => {
    expect(resolveHttpAddr("127.0.0.1:18500", {})).toBe("http://127.0.0.1:18500");
    expect(resolveHttpAddr("https://agent.example:8501/", {})).toBe("https://agent.example:8501");
    expect(resolveHttpAddr("[::1]:8500", {})).toBe("http://[::1]:8500");
  });

  test("other schemes and garbage are errors", () => {
    expect(() => resolveHttpAddr("unix:///tmp/consul.sock", {})).toThrow("unsupported scheme");
    expect(() => resolveHttpAddr("http://exa mple:80", {})).toThrow("invalid HTTP address");
  });
});

describe("createAgentHttpClient", () => {
  function recordingFetch(status: number, body: string) {
    const seen: Array<{ url: string; method: string }> = [];
    const fetchFn = async (url: string, init: { method: string }) => {
      seen.push({ url, method: init.method });
      return new Response(body, { status });
    };
    return { seen, fetchFn };
  }

  test("GET decodes JSON; query parameters are sorted as Go encodes them", async () => {
    const { seen, fetchFn } = recordingFetch(200, '[{"Name":"a"}]');
    const client = createAgentHttpClient("http://127.0.0.1:8500", fetchFn);
    expect(await client.getJson("/v1/agent/members", { wan: "1", segment: "_all" })).toEqual([{ Name: "a" }]);
    expect(seen).toEqual([{ url: "http://127.0.0.1:8500/v1/agent/members?segment=_all&wan=1", method: "GET" }]);
  });

  test("PUT without a query has no '?'", async () => {
    const { seen, fetchFn } = recordingFetch(200, "");
    expect(await createAgentHttpClient("http://h:1", fetchFn).put("/v1/agent/leave")).toBe("");
    expect(seen[0]!.url).toBe("http://h:1/v1/agent/leave");
  });

  test("a non-200 answer rejects as the Go client words it, body trimmed", async () => {
    const { fetchFn } = recordingFetch(500, "agent: No node found with name 'x'\n");
    const err = await createAgentHttpClient("http://h:1", fetchFn).put("/v1/agent/force-leave/x").catch((e) => e);
    expect(err).toBeInstanceOf(AgentHttpError);
    expect(err.statusCode).toBe(500);
    expect(err.message).toBe("Unexpected response code: 500 (agent: No node found with name 'x')");
  });

  test("a transport failure names the method and URL", async () => {
    const fetchFn = async () => {
      throw Object.assign(new Error("Unable to connect"), { code: "ConnectionRefused" });
    };
    const err = await createAgentHttpClient("http://h:1", fetchFn).getJson("/v1/agent/members").catch((e) => e);
    expect(err.message).toBe('Get "http://h:1/v1/agent/members": connection refused');
    const other = async () => {
      throw new Error("socket hang up");
    };
    expect((await createAgentHttpClient("http://h:1", other).put("/x").catch((e) => e)).message).toBe('Put "http://h:1/x": socket hang up');
  });

  test("a body that is not JSON is an error", async () => {
    const { fetchFn } = recordingFetch(200, "<html>");
    await expect(createAgentHttpClient("http://h:1", fetchFn).getJson("/v1/agent/members")).rejects.toThrow("invalid JSON");
  });
});
