/**
 * The child of `causeway lock` while the lock is held, as command/lock's startChild, Run and
 * killChild handle it: started with its failure to start or its error exit reported, then watched
 * against the lock's loss and a shutdown, in which cases it gets SIGTERM and, after the grace period,
 * SIGKILL. Verbose lines go through `info`.
 */
import type { CommandIo } from "../../command.ts";
import { formatGoDuration } from "../../../lib/index.ts";
import { delay, type Clock } from "../../../platform/index.ts";
import type { ChildSpec, RunningChild, SpawnChild } from "./child.ts";
import type { Held } from "./contender.ts";
import { exitErrorText, KILL_GRACE_MS } from "./core.ts";

/** A started (or failed) child: `started` is undefined when it could not start; `failed` settles when it ended. */
export interface ChildRun {
  readonly started: Promise<RunningChild | undefined>;
  /** true when it could not start or exited with an error (command/lock's childErr). */
  readonly failed: Promise<boolean>;
}

/** command/lock's startChild: starts the child, reports its failure to start or its error exit. */
export function startChild(spawnChild: SpawnChild, spec: ChildSpec, io: CommandIo, info: (text: string) => void, track: (c: RunningChild | undefined) => void): ChildRun {
  info("Starting handler");
  if (spec.passStdin) info("Stdin passed to handler process");
  const started = spawnChild(spec).then(
    (c) => (track(c), c),
    (err: Error) => (io.err(`Error starting handler: ${err.message}\n`), undefined),
  );
  const failed = started.then(async (c) => {
    if (!c) return true;
    const error = exitErrorText(await c.exited);
    track(undefined);
    if (error !== undefined) io.err(`Error running handler: ${error}\n`);
    return error !== undefined;
  });
  return { started, failed };
}

/**
 * Waits for the child to end, the lock to be lost, or a shutdown; in the latter two cases kills the
 * child. Resolves to the child's contribution to the exit code (2 when it failed, else 0).
 */
export async function superviseChild(child: ChildRun, held: Held, shutdown: AbortSignal, clock: Clock, io: CommandIo, info: (text: string) => void): Promise<number> {
  const shutdownSeen = new Promise<"shutdown">((resolve) => {
    if (shutdown.aborted) resolve("shutdown");
    shutdown.addEventListener("abort", () => resolve("shutdown"), { once: true });
  });
  const first = await Promise.race([shutdownSeen, held.lost.then(() => "lost" as const), child.failed]);
  if (typeof first === "boolean") {
    info("Child terminated, releasing lock");
    return first ? 2 : 0;
  }
  info(first === "shutdown" ? "Shutdown triggered, killing child" : "Lock lost, killing child");
  await killChild(child, clock, io, info);
  return 0;
}

/** command/lock's killChild: SIGTERM, then SIGKILL if the child is still there after the grace period. */
async function killChild(child: ChildRun, clock: Clock, io: CommandIo, info: (text: string) => void): Promise<void> {
  const c = await child.started;
  if (!c) return info("No child process to kill");
  info(`Terminating child pid ${c.pid}`);
  try {
    c.signal("SIGTERM");
  } catch (err) {
    io.err(`Failed to terminate ${c.pid}: ${(err as Error).message}\n`);
    return;
  }
  const grace = new AbortController();
  const inTime = await Promise.race([child.failed.then(() => true), delay(clock, KILL_GRACE_MS, grace.signal).then(() => false)]);
  grace.abort();
  if (inTime) return info("Child terminated");
  info(`Child did not exit after grace period of ${formatGoDuration(KILL_GRACE_MS * 1e6)}`);
  info(`Killing child pid ${c.pid}`);
  try {
    c.signal("SIGKILL");
  } catch (err) {
    io.err(`Failed to kill ${c.pid}: ${(err as Error).message}\n`);
  }
}
