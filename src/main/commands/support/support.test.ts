import { describe, expect, test } from "bun:test";
import { AgentHttpError, agentClientFromFlags, createAgentHttpClient, escapeKeyPath } from "./http_client.ts";
import { decodeBase64, encodeBase64 } from "./base64.ts";
import { columnizeRows, goJsonIndent, tabwrite } from "./text_format.ts";

describe("tabwrite (Go text/tabwriter, padding 6)", () => {
  test("pads tab-terminated cells to the widest in their block plus 6; last cells are not padded", () => {
    expect(tabwrite("a\tx\nlonger\ty\n")).toBe("a           x\nlonger      y\n");
  });

  test("a line without a tab ends the column block", () => {
    expect(tabwrite("Value\tline1\nline2\nab\tc")).toBe("Value      line1\nline2\nab      c");
  });

  test("nested columns and empty cells are padded too", () => {
    expect(tabwrite("a\tbb\tc\naaa\t\td\n")).toBe("a        bb      c\naaa              d\n");
  });
});

describe("columnizeRows (ryanuber/columnize)", () => {
  test("trims cells, pads all but the last, two-space glue, no trailing newline", () => {
    expect(columnizeRows([["a", "bb", "c"], ["ddd", " e ", "ffff"], ["g", "h"]])).toBe("a    bb  c\nddd  e   ffff\ng    h");
    expect(columnizeRows([["x|y", "z"]])).toBe("x|y  z");
  });
});

describe("goJsonIndent", () => {
  test("tab indentation and Go's HTML escapes", () => {
    expect(goJsonIndent([{ k: "<a&b>" }])).toBe('[\n\t{\n\t\t"k": "\\u003ca\\u0026b\\u003e"\n\t}\n]');
    expect(goJsonIndent([])).toBe("[]");
  });
});

describe("base64 (Go StdEncoding)", () => {
  test("round-trips bytes; newlines are skipped; bad input names a byte", () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    expect(decodeBase64(encodeBase64(bytes))).toEqual(bytes);
    expect(new TextDecoder().decode(decodeBase64("aGVs\nbG8="))).toBe("hello");
    expect(() => decodeBase64("aGVsbG8")).toThrow("illegal base64 data at input byte 4");
    expect(() => decodeBase64("a=bc")).toThrow("illegal base64 data at input byte 1");
    expect(() => decodeBase64("ab$=")).toThrow("illegal base64 data at input byte 2");
  });
});

describe("AgentHttpClient.request and client defaults", () => {
  function recordingFetch(status: number, body: string, headers: Record<string, string> = {}) {
    const seen: Array<{ url: string; method: string; body?: string; headers?: Readonly<Record<string, string>> }> = [];
    const fetchFn = async (url: string, init: { method: string; body?: Uint8Array; headers?: Readonly<Record<string, string>> }) => {
      seen.push({ url, method: init.method, ...(init.body ? { body: new TextDecoder().decode(init.body) } : {}), ...(init.headers ? { headers: init.headers } : {}) });
      return new Response(body, { status, headers });
    };
    return { seen, fetchFn };
  }

  test("sends a body; repeated query values keep their order; keys sorted", async () => {
    const { seen, fetchFn } = recordingFetch(200, "true");
    const res = await createAgentHttpClient("http://h:1", fetchFn).request("PUT", "/v1/kv/a", { query: { z: "1", "node-meta": ["b:2", "a:1"] }, body: "v" });
    expect(res.text()).toBe("true");
    expect(seen).toEqual([{ url: "http://h:1/v1/kv/a?node-meta=b%3A2&node-meta=a%3A1&z=1", method: "PUT", body: "v" }]);
  });

  test("accepted statuses resolve, others reject with the status and body", async () => {
    const { fetchFn } = recordingFetch(404, "");
    const client = createAgentHttpClient("http://h:1", fetchFn);
    expect((await client.request("GET", "/v1/kv/x", { accept: [404] })).status).toBe(404);
    const err = await client.request("GET", "/v1/kv/x").catch((e) => e);
    expect(err).toBeInstanceOf(AgentHttpError);
    expect(err.message).toBe("Unexpected response code: 404 ()");
  });

  test("headers and bytes are returned; json() names the URL when the body is not JSON", async () => {
    const { fetchFn } = recordingFetch(200, "<html>", { "X-Consul-Index": "12" });
    const res = await createAgentHttpClient("http://h:1", fetchFn).request("GET", "/v1/snapshot");
    expect(res.headers.get("x-consul-index")).toBe("12");
    expect(res.body.length).toBe(6);
    expect(() => res.json()).toThrow("invalid JSON from http://h:1/v1/snapshot");
  });

  test("a transport failure on DELETE reads Delete \"<url>\"", async () => {
    const fetchFn = async () => {
      throw Object.assign(new Error("x"), { code: "ECONNREFUSED" });
    };
    expect((await createAgentHttpClient("http://h:1", fetchFn).request("DELETE", "/v1/kv/a").catch((e) => e)).message).toBe('Delete "http://h:1/v1/kv/a": connection refused');
  });

  test("agentClientFromFlags: -datacenter as ?dc= on every request, -token (else env) as X-Consul-Token", async () => {
    const { seen, fetchFn } = recordingFetch(200, "[]");
    const values = new Map<string, unknown>([["http-addr", "127.0.0.1:9"], ["datacenter", "dc2"]]);
    const client = agentClientFromFlags(values, { env: () => ({ CONSUL_HTTP_TOKEN: "env-token" }), fetch: fetchFn });
    await client.getJson("/v1/catalog/nodes");
    await client.request("GET", "/v1/catalog/nodes", { query: { dc: "dc3" } });
    await agentClientFromFlags(new Map([["token", "flag-token"]]), { env: () => ({ CONSUL_HTTP_TOKEN: "env-token" }), fetch: fetchFn }).put("/v1/agent/leave");
    expect(seen).toEqual([
      { url: "http://127.0.0.1:9/v1/catalog/nodes?dc=dc2", method: "GET", headers: { "X-Consul-Token": "env-token" } },
      { url: "http://127.0.0.1:9/v1/catalog/nodes?dc=dc3", method: "GET", headers: { "X-Consul-Token": "env-token" } },
      { url: "http://127.0.0.1:8500/v1/agent/leave", method: "PUT", headers: { "X-Consul-Token": "flag-token" } },
    ]);
  });

  test("escapeKeyPath keeps slashes and escapes each segment", () => {
    expect(escapeKeyPath("a b/c?d/#e/")).toBe("a%20b/c%3Fd/%23e/");
  });
});
