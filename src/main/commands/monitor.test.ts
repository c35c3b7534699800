import { describe, expect, test } from "bun:test";
import { createHttpApi } from "../../http/index.ts";
import { createLogger, LOG_LEVELS, LogTaps, serveHttp } from "../../platform/index.ts";
import { createMonitorCommand, REMOTE_ENDED } from "./monitor.ts";

/** An agent API on loopback whose monitor reads the taps of a logger at level "error". */
async function agentWithLog() {
  const taps = new LogTaps();
  const log = createLogger("agent", { level: "error", sink: () => {}, now: () => 0, taps });
  const app = createHttpApi({
    agent: { datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "n1", nodeId: "id", server: true, version: "0.1.0", revision: "", advertiseAddr: "10.0.0.1", serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}) },
    raft: { leader: () => "", peers: () => [] },
    monitor: { tap: (t) => taps.add(t) },
  });
  const server = await serveHttp({ host: "127.0.0.1", port: 0, handler: (req) => app.fetch(req) });
  return { taps, log, server, addr: `-http-addr=http://127.0.0.1:${server.port}` };
}

/** Resolves once `pred` holds, checking every few milliseconds (real sockets; bounded by the test timeout). */
async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 5));
}

function run(interrupted: Promise<void>, argv: string[]) {
  let out = "", err = "";
  const code = createMonitorCommand({ env: () => ({}), interrupted: () => interrupted }).run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out: () => out, err: () => err };
}

describe("causeway monitor", () => {
  test("prints the agent's lines at -log-level until interrupted (exit 0), then the agent drops the tap", async () => {
    const a = await agentWithLog();
    let interrupt!: () => void;
    try {
      const m = run(new Promise((r) => (interrupt = r)), [a.addr, "-log-level=debug"]);
      await until(() => a.taps.minIndex === LOG_LEVELS.indexOf("debug"));
      a.log.debug("hello", { n: 1 });
      a.log.trace("not shown");
      a.log.info("world");
      await until(() => m.out().split("\n").length > 2);
      expect(m.out()).toBe("1970-01-01T00:00:00.000Z [DEBUG] agent: hello n=1\n1970-01-01T00:00:00.000Z [INFO] agent: world\n");
      interrupt();
      expect(await m.code).toBe(0);
      await until(() => a.taps.minIndex === LOG_LEVELS.length);
      expect(m.err()).toBe("");
    } finally {
      await a.server.close();
    }
  });

  test("-log-json prints JSON lines; an agent that goes away ends it with Consul's message and exit 1", async () => {
    const a = await agentWithLog();
    const m = run(new Promise(() => {}), [a.addr, "-log-json"]);
    await until(() => a.taps.minIndex === LOG_LEVELS.indexOf("info"));
    a.log.warn("careful");
    await until(() => m.out().includes("\n"));
    expect(JSON.parse(m.out())).toMatchObject({ "@level": "warn", "@message": "careful" });
    await a.server.close();
    expect(await m.code).toBe(1);
    expect(m.out()).toEndWith(`\n${REMOTE_ENDED}\n`);
  });

  test("a level the agent refuses, or no agent, is 'Error starting monitor' and exit 1", async () => {
    const a = await agentWithLog();
    try {
      const bad = run(new Promise(() => {}), [a.addr, "-log-level=loud"]);
      expect(await bad.code).toBe(1);
      expect(bad.err()).toBe("Error starting monitor: Unexpected response code: 400 (Unknown log level: loud)\n");
    } finally {
      await a.server.close();
    }
    const none = run(new Promise(() => {}), [a.addr]);
    expect(await none.code).toBe(1);
    expect(none.err()).toStartWith("Error starting monitor: ");
  });
});
