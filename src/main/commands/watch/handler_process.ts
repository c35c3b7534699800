/**
 * Running a watch handler, as Consul 1.8's command/watch does with os/exec: through `$SHELL -c` (else
 * /bin/sh) with the arguments joined by spaces, or (-shell=false) the arguments as the command line;
 * the result's JSON on stdin, `CONSUL_INDEX` added to the environment, stdout and stderr the command's
 * own. Failures are worded as Go's exec package words them.
 */
import { spawn } from "node:child_process";
import type { Env } from "../support/http_client.ts";

export type { InterruptSignal } from "../support/interrupts.ts";
import type { InterruptSignal } from "../support/interrupts.ts";
import { goExitText, shellArgv } from "../support/go_exec.ts";

export interface HandlerSpec {
  /** The command line (see handlerArgv). */
  readonly argv: readonly string[];
  /** Written to the handler's stdin, which is then closed. */
  readonly stdin: string;
  /** The handler's whole environment. */
  readonly env: Env;
}

/** How a handler ended: `start` when it could not be started, `run` when it failed (Go's cmd.Wait error). */
export type HandlerExit = { readonly ok: true } | { readonly ok: false; readonly phase: "start" | "run"; readonly message: string };

export interface RunningHandler {
  readonly done: Promise<HandlerExit>;
  /** Forwards an interrupt to the handler (Consul's agent.ForwardSignals). */
  signal(sig: InterruptSignal): void;
}

export type HandlerSpawner = (spec: HandlerSpec) => RunningHandler;

/** Consul's exec.Script / exec.Subprocess choice: `[$SHELL or /bin/sh, "-c", args joined by " "]`, or `args`. */
export const handlerArgv = shellArgv;

/** Go's `*exec.ExitError` text: `exit status 2`, `signal: killed`. */
export const exitText = goExitText;

/** Go's text for a command that could not start (exec.LookPath's for a bare name not on $PATH). */
function startText(cmd: string, err: NodeJS.ErrnoException): string {
  if (err.code === "ENOENT" && !cmd.includes("/")) return `exec: ${JSON.stringify(cmd)}: executable file not found in $PATH`;
  const reason = err.code === "ENOENT" ? "no such file or directory" : err.code === "EACCES" ? "permission denied" : err.message;
  return `fork/exec ${cmd}: ${reason}`;
}

/** Starts the handler with node:child_process (Bun, Deno and Node). */
export const spawnHandler: HandlerSpawner = (spec) => {
  const [cmd, ...args] = spec.argv;
  if (cmd === undefined) return { done: Promise.resolve({ ok: false, phase: "start", message: "need an executable to run" }), signal: () => {} };
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(cmd, args, { stdio: ["pipe", "inherit", "inherit"], env: { ...spec.env } as Record<string, string> });
  } catch (err) {
    // node:child_process refuses some command lines (an empty name) before trying them.
    return { done: Promise.resolve({ ok: false, phase: "start", message: startText(cmd, { ...(err as Error), code: "ENOENT" }) }), signal: () => {} };
  }
  let running = true;
  const done = new Promise<HandlerExit>((resolve) => {
    child.once("error", (err: NodeJS.ErrnoException) => {
      running = false;
      resolve({ ok: false, phase: "start", message: startText(cmd, err) });
    });
    child.once("exit", (code, signal) => {
      running = false;
      resolve(code === 0 ? { ok: true } : { ok: false, phase: "run", message: exitText(code, signal) });
    });
  });
  // A handler that exits without reading its input is not an error (Go ignores EPIPE on stdin).
  child.stdin!.on("error", () => {});
  child.stdin!.end(spec.stdin);
  return {
    done,
    signal(sig) {
      if (running) child.kill(sig);
    },
  };
};
