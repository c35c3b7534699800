/**
 * The child process of `causeway lock`, started as Consul's command/lock starts it: through
 * `$SHELL -c "<args joined by spaces>"` (/bin/sh when SHELL is unset) with -shell (the default), or
 * the arguments as they are; the environment plus CONSUL_LOCK_HELD=true (and CAUSEWAY_LOCK_HELD=true);
 * stdout and stderr shared with the command, stdin only with -pass-stdin (else /dev/null). Signals go
 * to the child's pid alone (Consul's signalPid), not to a process group.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { Env } from "../support/http_client.ts";
import { lookPath } from "../connect/envoy_exec.ts";
import { shellArgv } from "../support/go_exec.ts";

export interface ChildSpec {
  /** The child arguments after the prefix. */
  readonly args: readonly string[];
  readonly shell: boolean;
  readonly passStdin: boolean;
  /** The command's environment (SHELL and PATH are read from it); the child gets it plus the lock markers. */
  readonly env: Env;
}

/** The signals the command sends or forwards. */
export type ChildSignal = "SIGINT" | "SIGTERM" | "SIGKILL";

/** How a child ended: an exit code, or the signal that ended it (Node's names, e.g. "SIGTERM"). */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: string | null;
}

export interface RunningChild {
  readonly pid: number;
  /** Settles once the child has exited; never rejects. */
  readonly exited: Promise<ChildExit>;
  /** Sends `sig` to the child's pid; throws with the system's reason when that fails. */
  signal(sig: ChildSignal): void;
}

/** Starts a child; rejects with Go's wording (`exec: "x": executable file not found in $PATH`) when it cannot. */
export type SpawnChild = (spec: ChildSpec) => Promise<RunningChild>;

/** The argv the child runs: `[shell, "-c", script]` with -shell (exec.Script), else the arguments (exec.Subprocess). */
export function childArgv(spec: Pick<ChildSpec, "args" | "shell" | "env">): readonly string[] {
  return shellArgv(spec.args, spec.shell, spec.env);
}

/** The child's environment: the command's plus the markers that the lock is held. */
export function childEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return { ...out, CONSUL_LOCK_HELD: "true", CAUSEWAY_LOCK_HELD: "true" };
}

/** Starts the child with node:child_process (on Bun, Deno and Node). */
export const spawnLockChild: SpawnChild = (spec) =>
  new Promise<RunningChild>((resolve, reject) => {
    const [name, ...rest] = childArgv(spec);
    if (name === undefined) return reject(new Error("need an executable to run"));
    let file: string;
    try {
      file = lookPath(name, spec.env.PATH);
    } catch (err) {
      return reject(err);
    }
    const child = spawn(file, rest, { argv0: name, env: childEnv(spec.env), stdio: [spec.passStdin ? "inherit" : "ignore", "inherit", "inherit"] });
    const exited = new Promise<ChildExit>((done) => child.once("exit", (code, signal) => done({ code, signal })));
    child.once("error", (err: NodeJS.ErrnoException) => {
      const reason = err.code === "ENOENT" ? "no such file or directory" : err.code === "EACCES" ? "permission denied" : err.message;
      reject(new Error(`fork/exec ${file}: ${reason}`));
    });
    child.once("spawn", () =>
      resolve({
        pid: child.pid!,
        exited,
        signal(sig) {
          if (child.exitCode !== null || child.signalCode !== null) return;
          process.kill(child.pid!, sig);
        },
      }),
    );
  });
