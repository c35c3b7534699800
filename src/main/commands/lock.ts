/**
 * `causeway lock [options] prefix child...`: Consul 1.8's `consul lock` (command/lock/lock.go in
 * hashicorp/consul). Acquires a lock at `<prefix>/.lock` (-n 1, api.Lock) or a slot of a semaphore
 * under the prefix (-n N > 1, api.Semaphore), runs the child while holding it, then releases it and
 * removes the coordination key if nobody else holds it. If the lock is lost, or on SIGINT/SIGTERM
 * (forwarded to the child as well), the child gets SIGTERM and, after a 5 s grace period, SIGKILL.
 *
 * Exit codes as Consul's: 1 for usage errors, agent errors, a failed acquisition, a timeout or a
 * shutdown before the lock was held, and a failed release or cleanup; otherwise 0, even when the
 * lock was lost or the child failed, except that -child-exit-code makes a failed child exit 2.
 */
import process from "node:process";
import type { Command, CommandIo } from "../command.ts";
import { GoError, parseGoDuration } from "../../lib/index.ts";
import { systemClock, type Clock } from "../../platform/index.ts";
import type { FlagSpec, ParsedFlags } from "../flags.ts";
import { agentClientFromFlags, processHttpDeps, type HttpCommandDeps } from "./support/http_client.ts";
import { boolFlag, commandHelp, parseHttpCommandLine, stringFlag, usageFailure } from "./support/index.ts";
import { onProcessInterrupts } from "./support/interrupts.ts";
import { createLockApi, type LockApi } from "./lock/api.ts";
import { spawnLockChild, type ChildSpec, type RunningChild, type SpawnChild } from "./lock/child.ts";
import { InUseError, type Contender, type Held } from "./lock/contender.ts";
import { DEFAULT_MONITOR_RETRY, DEFAULT_WAIT_MS, defaultSessionName, joinPath, MONITOR_RETRY_MS, SEMAPHORE_KEY } from "./lock/core.ts";
import { goSignalText } from "./support/go_exec.ts";
import { createKeyLock } from "./lock/key_lock.ts";
import { createSemaphore } from "./lock/semaphore.ts";
import { startChild, superviseChild } from "./lock/supervise.ts";

const FLAGS: FlagSpec[] = [
  { name: "child-exit-code", kind: "bool", usage: "Exit 2 if the child process exited with an error if this is true, otherwise this doesn't propagate an error from the child. The default value is false." },
  {
    name: "monitor-retry", kind: "int", arg: "<int>",
    usage: "Number of times to retry if the agent returns a 500 error while monitoring the lock. This allows riding out brief periods of unavailability without causing leader elections, but increases the amount of time required to detect a lost lock in some cases. The default value is 3, with a 1s wait between retries. Set this value to 0 to disable retries.",
  },
  { name: "n", kind: "int", arg: "<int>", usage: "Optional limit on the number of concurrent lock holders. The underlying implementation switches from a lock to a semaphore when the value is greater than 1. The default value is 1." },
  { name: "name", kind: "string", arg: "<string>", usage: "Optional name to associate with the lock session. If not provided, one is generated based on the provided child command." },
  { name: "pass-stdin", kind: "bool", usage: "Pass stdin to the child process." },
  { name: "shell", kind: "bool", usage: "Use a shell to run the command (can set a custom shell via the SHELL environment variable). The default value is true; -shell=false runs the arguments directly." },
  { name: "timeout", kind: "string", arg: "<duration>", usage: 'Maximum amount of time to wait to acquire the lock, specified as a duration like "1s" or "3h". The default value is 0 (wait forever).' },
  { name: "try", kind: "string", arg: "<duration>", usage: "DEPRECATED. Use -timeout instead." },
  { name: "verbose", kind: "bool", usage: "Enable verbose (debugging) output." },
];

const HELP = commandHelp(
  `Usage: causeway lock [options] prefix child...

  Acquires a lock or semaphore at a given path, and invokes a child process
  when successful. The child process can assume the lock is held while it
  executes. If the lock is lost or communication is disrupted the child
  process will be sent a SIGTERM signal and given time to gracefully exit.
  After the grace period expires the process will be hard terminated.

  When -n=1, only a single lock holder or leader exists providing mutual
  exclusion. Setting a higher value switches to a semaphore allowing multiple
  holders to coordinate.

  The prefix provided must have write privileges.
`,
  FLAGS,
);

/** What `causeway lock` takes from the process; tests pass their own. */
export interface LockDeps extends HttpCommandDeps {
  /** Timers: lock-delay retries, monitor retries, session renewals, the kill grace period, -timeout. */
  readonly clock: Clock;
  readonly spawnChild: SpawnChild;
  /** Calls `handler` on every SIGINT or SIGTERM until the returned function is called. */
  readonly onSignal: (handler: (sig: "SIGINT" | "SIGTERM") => void) => () => void;
}

/** The process environment, fetch, clock, signals and child processes. */
export const processLockDeps: LockDeps = { ...processHttpDeps, clock: systemClock(), spawnChild: spawnLockChild, onSignal: onProcessInterrupts };

/** The command line, checked as command/lock checks it. */
export interface LockOptions {
  readonly limit: number;
  readonly monitorRetry: number;
  readonly sessionName: string;
  readonly passStdin: boolean;
  readonly propagateChildCode: boolean;
  readonly shell: boolean;
  /** 0 waits forever; more makes a one-shot attempt of that long. */
  readonly timeoutMs: number;
  readonly verbose: boolean;
  /** The prefix without one leading "/". */
  readonly prefix: string;
  readonly childArgs: readonly string[];
}

/** A Go duration flag in ms; a bad value is a usage error worded as Go's flag package words it. */
function durationFlag(parsed: ParsedFlags, name: string): number | { usage: string } {
  const raw = stringFlag(parsed, name);
  if (raw === undefined) return 0;
  try {
    return parseGoDuration(raw) / 1e6;
  } catch (err) {
    return { usage: `invalid value "${raw}" for flag -${name}: ${err instanceof GoError ? err.message : String(err)}` };
  }
}

/**
 * The options from parsed flags, in command/lock's order of checks: `usage` for a bad flag value
 * (printed with the help), `error` for Consul's messages (printed alone); exit 1 either way.
 * -timeout wins over its deprecated alias -try when both are given.
 */
export function lockOptionsOf(parsed: ParsedFlags): LockOptions | { usage: string } | { error: string } {
  const timeout = parsed.values.has("timeout") ? durationFlag(parsed, "timeout") : durationFlag(parsed, "try");
  if (typeof timeout !== "number") return timeout;
  const int = (name: string, dflt: number) => (typeof parsed.values.get(name) === "number" ? (parsed.values.get(name) as number) : dflt);
  const limit = int("n", 1);
  if (limit <= 0) return { error: "Lock holder limit must be positive" };
  const extra = parsed.rest;
  if (extra.length < 2) return { error: "Key prefix and child command must be specified" };
  const prefix = extra[0]!.startsWith("/") ? extra[0]!.slice(1) : extra[0]!;
  if (timeout < 0) return { error: "Timeout must be positive" };
  const monitorRetry = int("monitor-retry", DEFAULT_MONITOR_RETRY);
  if (monitorRetry < 0) return { error: "Number for 'monitor-retry' must be >= 0" };
  const childArgs = extra.slice(1);
  return {
    limit,
    monitorRetry,
    sessionName: stringFlag(parsed, "name") || defaultSessionName(childArgs, prefix),
    passStdin: boolFlag(parsed, "pass-stdin"),
    propagateChildCode: boolFlag(parsed, "child-exit-code"),
    shell: parsed.values.get("shell") !== false,
    timeoutMs: timeout,
    verbose: boolFlag(parsed, "verbose"),
    prefix,
    childArgs,
  };
}

/** Builds `causeway lock` over the given environment, fetch, clock, signals and child processes. */
export function createLockCommand(deps: LockDeps = processLockDeps): Command {
  return {
    name: "lock",
    synopsis: "Execute a command holding a lock",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const opts = lockOptionsOf(parsed);
      if ("usage" in opts) return usageFailure(io, opts.usage, HELP);
      if ("error" in opts) {
        io.err(`${opts.error}\n`);
        return 1;
      }
      let api: LockApi;
      try {
        api = createLockApi(agentClientFromFlags(parsed.values, deps));
      } catch (err) {
        io.err(`Error connecting to Consul agent: ${(err as Error).message}\n`);
        return 1;
      }
      try {
        await api.nodeName();
      } catch (err) {
        io.err(`Error querying Consul agent: ${(err as Error).message}\n`);
        return 1;
      }
      const info = (text: string) => void (opts.verbose && io.out(`${text}\n`));
      const contender = setupContender(opts, api, deps.clock, info);
      if (typeof contender === "string") {
        io.err(`Lock setup failed: ${contender}\n`);
        return 1;
      }
      const shutdown = new AbortController();
      let running: RunningChild | undefined;
      const unsubscribe = deps.onSignal((sig) => {
        if (running) {
          try {
            running.signal(sig);
          } catch (err) {
            io.err(`Warning, could not forward signal: failed to send signal "${goSignalText(sig)}": ${(err as Error).message}\n`);
          }
        }
        shutdown.abort();
      });
      try {
        info("Attempting lock acquisition");
        let held: Held | undefined;
        try {
          held = await contender.acquire(shutdown.signal);
        } catch (err) {
          io.err(`Lock acquisition failed: ${(err as Error).message}\n`);
          return 1;
        }
        if (!held) {
          io.err("Shutdown triggered or timeout during lock acquisition\n");
          return 1;
        }
        let childCode = 0;
        if (shutdown.signal.aborted) io.err("Shutdown triggered during lock acquisition\n");
        else {
          const spec: ChildSpec = { args: opts.childArgs, shell: opts.shell, passStdin: opts.passStdin, env: deps.env() };
          const child = startChild(deps.spawnChild, spec, io, info, (c) => (running = c));
          childCode = await superviseChild(child, held, shutdown.signal, deps.clock, io, info);
        }
        const failed = await releaseAndCleanup(contender, io, info);
        return failed ?? (opts.propagateChildCode ? childCode : 0);
      } finally {
        unsubscribe();
      }
    },
  };
}

/** `causeway lock` against the process environment. */
export const lockCommand: Command = createLockCommand();

/** command/lock's setupLock / setupSemaphore: the contender, or the reason it cannot be made. */
function setupContender(o: LockOptions, api: LockApi, clock: Clock, info: (text: string) => void): Contender | string {
  const oneShot = o.timeoutMs > 0;
  const common = { api, clock, sessionName: o.sessionName, tryOnce: oneShot, waitMs: oneShot ? o.timeoutMs : DEFAULT_WAIT_MS, monitorRetries: o.monitorRetry, monitorRetryMs: MONITOR_RETRY_MS };
  if (o.limit === 1) {
    // The semaphore's key name, so that a lock and a semaphore on one prefix conflict visibly.
    const key = joinPath(o.prefix, SEMAPHORE_KEY);
    info(`Setting up lock at path: ${key}`);
    return createKeyLock({ ...common, key });
  }
  info(`Setting up semaphore (limit ${o.limit}) at prefix: ${o.prefix}`);
  if (o.prefix === "") return "missing prefix";
  return createSemaphore({ ...common, prefix: o.prefix, limit: o.limit });
}

/** The RELEASE step: release, then remove the key unless it is in use. Resolves to 1 on a failure, else undefined. */
async function releaseAndCleanup(contender: Contender, io: CommandIo, info: (text: string) => void): Promise<number | undefined> {
  try {
    await contender.release();
  } catch (err) {
    io.err(`Lock release failed: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    await contender.destroy();
    info("Cleanup succeeded");
  } catch (err) {
    if (!(err instanceof InUseError)) {
      io.err(`Lock cleanup failed: ${(err as Error).message}\n`);
      return 1;
    }
    info("Cleanup aborted, lock in use");
  }
  return undefined;
}
