import { describe, expect, test } from "bun:test";
import { createLogger, LOG_LEVELS, LogTaps } from "../platform/index.ts";
import { createHttpApi } from "./app.ts";
import { MONITOR_BUFFER_LINES } from "./agent_monitor.ts";
import type { AgentInfo } from "./deps.ts";

const agent: AgentInfo = {
  datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "n1", nodeId: "id", server: true, version: "1.8.0", revision: "", advertiseAddr: "127.0.0.1",
  serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}),
};

/** An API whose monitor reads the taps of a logger at level "error" (so the taps see what the sink does not). */
function setup() {
  const taps = new LogTaps();
  const log = createLogger("agent", { level: "error", sink: () => {}, now: () => 0, taps });
  const dropped: number[] = [];
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, monitor: { tap: (t) => taps.add(t), onDropped: (n) => dropped.push(n) } });
  return { app, taps, log, dropped };
}

async function readLines(res: Response, n: number): Promise<{ lines: string[]; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = res.body!.getReader();
  let text = "";
  while (text.split("\n").length <= n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return { lines: text.split("\n").slice(0, n), reader };
}

describe("GET /v1/agent/monitor", () => {
  test("streams lines at ?loglevel= and above, whatever the agent's level; ends its tap when the client goes", async () => {
    const { app, taps, log } = setup();
    const res = await app.request("/v1/agent/monitor?loglevel=debug");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    log.trace("hidden");
    log.debug("first", { k: "v" });
    log.named("http").warn("second");
    const { lines, reader } = await readLines(res, 2);
    expect(lines).toEqual(["1970-01-01T00:00:00.000Z [DEBUG] agent: first k=v", "1970-01-01T00:00:00.000Z [WARN] agent.http: second"]);
    await reader.cancel();
    expect(taps.minIndex).toBe(LOG_LEVELS.length);
  });

  test("INFO by default; Consul's ERR; ?logjson gives JSON lines; an unknown level is 400 with Consul's text", async () => {
    const { app, log } = setup();
    const res = await app.request("/v1/agent/monitor?logjson");
    log.debug("not at info");
    log.info("at info");
    const { lines, reader } = await readLines(res, 1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ "@level": "info", "@message": "at info", "@module": "agent" });
    await reader.cancel();
    const err = await app.request("/v1/agent/monitor?loglevel=err");
    log.warn("below err");
    log.error("at err");
    const e = await readLines(err, 1);
    expect(e.lines).toEqual(["1970-01-01T00:00:00.000Z [ERROR] agent: at err"]);
    await e.reader.cancel();
    const bad = await app.request("/v1/agent/monitor?loglevel=verbose");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("Unknown log level: verbose\n");
  });

  test("a client that does not read gets the first 512 lines; the rest are dropped and counted once it goes", async () => {
    const { app, log, dropped } = setup();
    const res = await app.request("/v1/agent/monitor");
    for (let i = 0; i < MONITOR_BUFFER_LINES + 100; i++) log.info(`line ${i}`);
    const { lines, reader } = await readLines(res, MONITOR_BUFFER_LINES);
    expect(lines.at(-1)).toEndWith(`line ${MONITOR_BUFFER_LINES - 1}`);
    await reader.cancel();
    expect(dropped).toEqual([100]);
  });
});
