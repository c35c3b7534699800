/**
 * Starts `causeway agent` as a real child process (from source or a compiled binary) and waits until
 * its banner reports the listeners, so tests talk to the real thing over loopback.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";

export interface AgentProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` of the HTTP API. */
  readonly httpUrl: string;
  readonly dataDir: string;
  /** Everything the process wrote so far (stdout and stderr interleaved). */
  output(): string;
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns `cmd args` in `cwd` and resolves once the banner is out; rejects with the output if it exits or times out first. */
export function startAgentProcess(cmd: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<AgentProcess> {
  const child = spawn(cmd, [...args], { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agent did not start within ${options.timeoutMs ?? 20000} ms:\n${out}`));
    }, options.timeoutMs ?? 20000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const http = /Client Addr: HTTP: ([\d.]+:\d+)/.exec(out);
      const dir = /Data Dir: (\S+)/.exec(out);
      if (http && dir) {
        clearTimeout(guard);
        // A -dev agent's temporary data dir is removed by the agent at a clean exit only: once the
        // process is gone (SIGKILL too), nothing else owns it.
        if (/Data Dir: \S+ \(temporary/.test(out)) void exited.then(() => rmSync(dir[1]!, { recursive: true, force: true }));
        child.stdout!.off("data", onData);
        child.stdout!.on("data", (x: Buffer) => (out += x.toString()));
        resolve({
          child,
          httpUrl: `http://${http[1]}`,
          dataDir: dir[1]!,
          output: () => out,
          stop: (signal = "SIGTERM") => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    exited.then((code) => {
      clearTimeout(guard);
      reject(new Error(`agent exited with ${code} before starting:\n${out}`));
    });
  });
}

/** A TCP port that was free a moment ago (for ports that must be known before start, e.g. -retry-join targets). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Calls `f` every 100 ms until `ok` holds for its value; rejects with the last value after `ms`. */
export async function poll<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined as T);
    if (v !== undefined && ok(v)) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One HTTP request to an agent as a client sends it (`X-Consul-Token` when `token` is given), with the body as text and as JSON when it parses. */
export async function agentCall(httpUrl: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${httpUrl}${path}`, {
    method, ...(token ? { headers: { "X-Consul-Token": token } } : {}), ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}
