/** KV writes over a real agent's HTTP API, for end-to-end tests. */
import type { AgentProcess } from "./agent_process.ts";

/** `PUT /v1/kv/<key>`: the API's true/false, or undefined when it answers an error status. */
export async function putKv(a: AgentProcess, key: string, value: string, timeoutMs = 10_000): Promise<boolean | undefined> {
  const res = await fetch(`${a.httpUrl}/v1/kv/${key}`, { method: "PUT", body: value, signal: AbortSignal.timeout(timeoutMs) });
  return res.ok ? ((await res.json()) as boolean) : undefined;
}
