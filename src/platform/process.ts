/**
 * Starting the commands of script health checks (it satisfies src/agent's ProcessSpawner structurally;
 * platform cannot import the agent). Like Consul's exec.Subprocess + SetSysProcAttr: no shell, stdin
 * closed, the child in a process group of its own (so a timeout kills its whole subtree), stdout and
 * stderr interleaved into one buffer that keeps only the tail. Built on node:child_process.
 */
import { spawn } from "node:child_process";

export interface CheckProcessSpec {
  readonly args: readonly string[];
  /** Only the last this-many bytes of output are kept. */
  readonly maxOutputBytes: number;
}

export interface CheckProcessOutcome {
  /** Exit code; null when ended by a signal. */
  readonly code: number | null;
  readonly output: string;
  readonly totalBytes: number;
}

export interface CheckProcess {
  /** Settles once the process has exited and its output is read; rejects when it could not start. */
  readonly done: Promise<CheckProcessOutcome>;
  /** SIGKILL to the process group. */
  kill(): void;
}

/** A byte ring that keeps the last `size` bytes written and counts them all (Go's circbuf). */
export class TailBuffer {
  private chunks: Uint8Array[] = [];
  private held = 0;
  total = 0;

  constructor(readonly size: number) {}

  write(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.size <= 0) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
    if (this.held > 2 * this.size + 65536) this.compact();
  }

  /** The kept bytes as UTF-8 text. */
  text(): string {
    this.compact();
    return new TextDecoder().decode(this.chunks[0] ?? new Uint8Array(0));
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const kept = all.length > this.size ? all.subarray(all.length - this.size) : all;
    this.chunks = [kept];
    this.held = kept.length;
  }
}

/** Go's wording for a command that could not start. */
function startError(cmd: string, err: NodeJS.ErrnoException): Error {
  const reason = err.code === "ENOENT" ? "no such file or directory" : err.code === "EACCES" ? "permission denied" : err.message;
  if (err.code === "ENOENT" && !cmd.includes("/")) return new Error(`exec: ${JSON.stringify(cmd)}: executable file not found in $PATH`);
  return new Error(`fork/exec ${cmd}: ${reason}`);
}

/** Starts one check command. An empty `args` rejects `done` at once. */
export function spawnCheckProcess(spec: CheckProcessSpec): CheckProcess {
  const [cmd, ...rest] = spec.args;
  if (cmd === undefined) return { done: Promise.reject(new Error("exec: no command")), kill: () => {} };
  const out = new TailBuffer(spec.maxOutputBytes);
  const child = spawn(cmd, rest, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let exited = false;
  const done = new Promise<CheckProcessOutcome>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => out.write(d));
    child.stderr!.on("data", (d: Buffer) => out.write(d));
    child.once("error", (err: NodeJS.ErrnoException) => {
      exited = true;
      reject(startError(cmd, err));
    });
    child.once("close", (code) => {
      exited = true;
      resolve({ code, output: out.text(), totalBytes: out.total });
    });
  });
  done.catch(() => {});
  return {
    done,
    kill() {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    },
  };
}
