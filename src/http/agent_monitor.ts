/**
 * GET /v1/agent/monitor: the agent's log lines as they happen, one per line, at `?loglevel=` (Consul's
 * names TRACE, DEBUG, INFO, WARN, ERR, ERROR in any case; default INFO, whatever the agent's own
 * level) and as JSON with `?logjson`, until the client goes away. As Consul's monitor, at most 512
 * lines wait for a slow client; lines beyond are dropped and their number reported once the request
 * ends (`onDropped`).
 */
import type { Hono } from "hono";
import type { LogLevel } from "../platform/index.ts";
import type { MonitorApi } from "./deps.ts";
import { query } from "./request.ts";
import { textError } from "./respond.ts";

/** Lines buffered for a slow client before lines are dropped (Consul's monitor BufferSize). */
export const MONITOR_BUFFER_LINES = 512;

const CONSUL_LEVELS: Readonly<Record<string, LogLevel>> = { TRACE: "trace", DEBUG: "debug", INFO: "info", WARN: "warn", ERR: "error", ERROR: "error" };

export function mountAgentMonitor(app: Hono, monitor: MonitorApi | undefined): void {
  app.get("/v1/agent/monitor", (c) => {
    if (!monitor) return textError(c, 500, "the log monitor is not available on this agent");
    const asked = query(c, "loglevel") || "INFO";
    const level = CONSUL_LEVELS[asked.toUpperCase()];
    if (!level) return textError(c, 400, `Unknown log level: ${asked}`);
    const format = query(c, "logjson") !== undefined ? "json" : "text";
    const encoder = new TextEncoder();
    let remove: (() => void) | undefined;
    let dropped = 0;
    const stop = () => {
      if (!remove) return;
      remove();
      remove = undefined;
      if (dropped > 0) monitor.onDropped?.(dropped);
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        remove = monitor.tap({
          level,
          format,
          write(line) {
            if ((controller.desiredSize ?? 0) <= 0) dropped++;
            else controller.enqueue(encoder.encode(`${line}\n`));
          },
        });
        c.req.raw.signal.addEventListener("abort", stop, { once: true });
      },
      cancel: stop,
    }, new CountQueuingStrategy({ highWaterMark: MONITOR_BUFFER_LINES }));
    return c.body(body, 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache" });
  });
}
