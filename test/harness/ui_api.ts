/**
 * A fake of the agent's /v1 API for the web UI's unit tests (UiDeps.api): routes by "METHOD /path"
 * (exact, or a prefix ending in "*"), each answering JSON (or text) with an X-Consul-Index; every call
 * is recorded with its token and body. An unrouted call answers 404 naming itself, so a page that
 * reads something the test did not seed fails loudly.
 */
import type { ApiCall } from "../../src/ui/index.ts";

export interface FakeAnswer {
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly index?: number;
}

export type FakeRoute = (url: URL, call: ApiCall) => FakeAnswer | Promise<FakeAnswer>;

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly token: string | undefined;
  readonly body: string | undefined;
}

export function fakeApi(routes: Record<string, FakeRoute>): { api: (call: ApiCall) => Promise<Response>; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const api = async (call: ApiCall): Promise<Response> => {
    const method = call.method ?? "GET";
    const url = new URL(`http://fake${call.path}`);
    calls.push({ method, path: call.path, token: call.token, body: call.body });
    const key = `${method} ${url.pathname}`;
    const route = routes[key] ?? Object.entries(routes).find(([k]) => k.endsWith("*") && key.startsWith(k.slice(0, -1)))?.[1];
    if (!route) return new Response(`no fake for ${key}`, { status: 404 });
    const a = await route(url, call);
    const body = a.text ?? JSON.stringify(a.json ?? null);
    return new Response(body, { status: a.status ?? 200, headers: { "X-Consul-Index": String(a.index ?? 1), "Content-Type": a.text !== undefined ? "text/plain" : "application/json" } });
  };
  return { api, calls };
}

/** The blocking parameters of a fake call: `index` (0 when absent) and whether it is a blocking read. */
export function blockingOf(url: URL): { readonly minIndex: number; readonly blocking: boolean } {
  const index = url.searchParams.get("index");
  return { minIndex: Number(index ?? "0"), blocking: index !== null && url.searchParams.has("wait") };
}
