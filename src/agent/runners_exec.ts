/**
 * Script and Docker check runners (Consul 1.8 agent/checks CheckMonitor and CheckDocker): exit code 0
 * is passing, 1 warning, anything else critical; output is the last `outputMaxSize` bytes, prefixed by
 * "Captured N of M bytes\n...\n" when more was written. Processes are started through the injected
 * ProcessSpawner, the Docker Engine API is reached through the injected DockerEngine, time is the Clock's.
 */
import { formatDuration } from "../lib/index.ts";
import type { Cancel } from "../platform/index.ts";
import type { DockerEngine, ProcessSpawner, RunningProcess } from "./ports.ts";
import { errorText, intervalLoop, type CheckRunner, type IntervalOptions } from "./runners.ts";

/** Consul's CheckMonitor timeout when none is given. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 30_000;

/** Consul's circbuf report: the kept tail, announced when output was cut. */
export function capturedOutput(output: string, keptBytes: number, totalBytes: number): string {
  return totalBytes > keptBytes ? `Captured ${keptBytes} of ${totalBytes} bytes\n...\n${output}` : output;
}

const statusOfExit = (code: number | null) => (code === 0 ? "passing" : code === 1 ? "warning" : "critical");
const byteLength = (s: string) => new TextEncoder().encode(s).length;

/**
 * A script check: runs `args` every interval. After the timeout (default 30 s) the process group is
 * killed and the check goes critical with "Timed out (30s) running check" plus any output; the next
 * run waits until the killed process has exited, so runs never overlap. stop() kills a run in flight.
 */
export function startScriptCheck(o: IntervalOptions & { spawn: ProcessSpawner; args: readonly string[]; outputMaxSize: number }): CheckRunner {
  const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : DEFAULT_SCRIPT_TIMEOUT_MS;
  let current: RunningProcess | undefined;
  const loop = intervalLoop({ ...o, timeoutMs }, async (notify) => {
    let proc: RunningProcess;
    try {
      proc = o.spawn({ args: o.args, maxOutputBytes: o.outputMaxSize });
    } catch (err) {
      notify(o.checkId, "critical", errorText(err));
      return;
    }
    current = proc;
    let timer: Cancel | undefined;
    const timedOut = new Promise<"timeout">((resolve) => (timer = o.clock.setTimer(timeoutMs, () => resolve("timeout"))));
    const first = await Promise.race([proc.done.then((v) => ({ v }), (e: unknown) => ({ e })), timedOut]);
    timer?.();
    if (first === "timeout") {
      proc.kill();
      // Wait for the exit (and its last output) so that two runs never overlap, as Consul does.
      const end = await proc.done.catch(() => undefined);
      current = undefined;
      const out = end ? capturedOutput(end.output, byteLength(end.output), end.totalBytes) : "";
      notify(o.checkId, "critical", `Timed out (${formatDuration(timeoutMs)}) running check${out ? `\n\n${out}` : ""}`);
      return;
    }
    current = undefined;
    if ("e" in first) {
      notify(o.checkId, "critical", errorText(first.e));
      return;
    }
    const r = first.v;
    notify(o.checkId, statusOfExit(r.code), capturedOutput(r.output, byteLength(r.output), r.totalBytes));
  });
  return {
    stop() {
      loop.stop();
      current?.kill();
      current = undefined;
    },
  };
}

/**
 * A Docker check: each interval creates an exec of `args` in the container, starts it (attached, with
 * a TTY) and inspects its exit code, through the Docker Engine API (Consul's DockerClient; its error
 * texts). Errors are critical with their message.
 */
export function startDockerCheck(o: IntervalOptions & {
  docker: DockerEngine; containerId: string; args: readonly string[]; outputMaxSize: number;
}): CheckRunner {
  const client = dockerExecClient(o.docker, o.outputMaxSize);
  return intervalLoop(o, async (notify) => {
    try {
      const execId = await client.createExec(o.containerId, o.args);
      const out = await client.startExec(o.containerId, execId);
      const code = await client.inspectExec(o.containerId, execId);
      notify(o.checkId, statusOfExit(code), capturedOutput(out.body, byteLength(out.body), out.totalBytes));
    } catch (err) {
      notify(o.checkId, "critical", errorText(err));
    }
  });
}

/** Consul's DockerClient exec calls over the DockerEngine port, with its error messages. */
export function dockerExecClient(docker: DockerEngine, maxBytes: number) {
  /** One API call; a transport failure becomes "<failed>: <error>", as Consul wraps it. */
  const call = async (method: "GET" | "POST", path: string, body: unknown, failed: string) => {
    try {
      return await docker.call(method, path, body, maxBytes);
    } catch (err) {
      throw new Error(`${failed}: ${errorText(err)}`);
    }
  };
  return {
    async createExec(containerId: string, cmd: readonly string[]): Promise<string> {
      const body = { AttachStdin: false, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: cmd };
      const r = await call("POST", `/containers/${encodeURIComponent(containerId)}/exec`, body, `create exec failed for container ${containerId}`);
      if (r.status === 201) {
        const id = parseField(r.body, "Id");
        if (typeof id !== "string") throw new Error(`create exec response for container ${containerId} cannot be parsed: ${describe(r.body)}`);
        return id;
      }
      if (r.status === 404) throw new Error(`create exec failed for unknown container ${containerId}`);
      if (r.status === 409) throw new Error(`create exec failed since container ${containerId} is paused or stopped`);
      throw new Error(`create exec failed for container ${containerId} with status ${r.status}: ${r.body}`);
    },
    async startExec(containerId: string, execId: string): Promise<{ body: string; totalBytes: number }> {
      const r = await call("POST", `/exec/${execId}/start`, { Detach: false, Tty: true }, `start exec failed for container ${containerId}`);
      if (r.status === 200) return r;
      if (r.status === 404) throw new Error(`start exec failed for container ${containerId}: invalid exec id ${execId}`);
      if (r.status === 409) throw new Error(`start exec failed since container ${containerId} is paused or stopped`);
      throw new Error(`start exec failed for container ${containerId} with status ${r.status}: body: ${r.body} err: <nil>`);
    },
    async inspectExec(containerId: string, execId: string): Promise<number> {
      const r = await call("GET", `/exec/${execId}/json`, undefined, `inspect exec failed for container ${containerId}`);
      if (r.status === 200) {
        const code = parseField(r.body, "ExitCode");
        if (typeof code !== "number") throw new Error(`inspect exec response for container ${containerId} cannot be parsed: ${describe(r.body)}`);
        return code;
      }
      if (r.status === 404) throw new Error(`inspect exec failed for container ${containerId}: invalid exec id ${execId}`);
      throw new Error(`inspect exec failed for container ${containerId} with status ${r.status}: ${r.body}`);
    },
  };
}

/** A top-level field of a JSON object body (Go's decoder matches the name case-insensitively). */
function parseField(body: string, name: string): unknown {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return undefined;
  const key = Object.keys(doc).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (doc as Record<string, unknown>)[key];
}

function describe(body: string): string {
  try {
    JSON.parse(body);
    return "unexpected JSON shape";
  } catch (err) {
    return errorText(err);
  }
}
