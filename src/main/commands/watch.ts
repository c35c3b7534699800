/**
 * `causeway watch`: Consul 1.8's `consul watch` (command/watch/watch.go, api/watch in hashicorp/consul).
 * Watches one view (a key, a key prefix, the service list, the node list, a service's health, checks,
 * or user events) with blocking queries. Without a handler it prints the current value as indented JSON
 * and exits 0. With a handler (the arguments after the flags) it runs until SIGINT or SIGTERM (exit 0),
 * running the handler on each change with the JSON on stdin and `CONSUL_INDEX` in its environment; a
 * handler that cannot start or fails stops the watch with exit 1, as in Consul. Failed queries are
 * logged and retried with Consul's back-off. The decisions live in watch/plan.ts (pure); this file is
 * the wiring.
 */
import process from "node:process";
import type { Command, CommandIo } from "../command.ts";
import type { FlagSpec } from "../flags.ts";
import { parseGoBool } from "../../lib/index.ts";
import { systemClock, type Clock } from "../../platform/index.ts";
import { agentClientFromFlags, HTTP_API_FLAGS, processHttpDeps, type AgentHttpClient, type FetchFn, type HttpCommandDeps } from "./support/http_client.ts";
import { boolFlag, commandHelp, parseHttpCommandLine, stringFlag } from "./support/http_command.ts";
import { onProcessInterrupts } from "./support/interrupts.ts";
import { handlerArgv, spawnHandler, type HandlerSpawner, type InterruptSignal, type RunningHandler } from "./watch/handler_process.ts";
import { runWatchLoop, watchErrorLine } from "./watch/loop.ts";
import { queryWatch } from "./watch/query.ts";
import { goJson } from "./watch/results.ts";
import { parseWatchSpec, type WatchParams, type WatchSpec } from "./watch/spec.ts";

const FLAGS: FlagSpec[] = [
  { name: "type", kind: "string", arg: "<type>", usage: "Specifies the watch type. One of key, keyprefix, services, nodes, service, checks, or event." },
  { name: "key", kind: "string", arg: "<key>", usage: "Specifies the key to watch. Only for 'key' type." },
  { name: "prefix", kind: "string", arg: "<prefix>", usage: "Specifies the key prefix to watch. Only for 'keyprefix' type." },
  { name: "service", kind: "string", arg: "<service>", usage: "Specifies the service to watch. Required for 'service' type, optional for 'checks' type." },
  { name: "tag", kind: "strings", arg: "<tag>", usage: "Specifies the service tag(s) to filter on. Optional for 'service' type." },
  { name: "passingonly", kind: "string", arg: "<[true|false]>", usage: "Specifies if only hosts passing all checks are displayed. Optional for 'service' type, must be one of `[true|false]`. Defaults false." },
  { name: "shell", kind: "bool", usage: "Use a shell to run the command (can set a custom shell via the SHELL environment variable). Default true; -shell=false runs the arguments as the command line." },
  { name: "state", kind: "string", arg: "<state>", usage: "Specifies the states to watch. Optional for 'checks' type." },
  { name: "name", kind: "string", arg: "<name>", usage: "Specifies an event name to watch. Only for 'event' type." },
];

const HELP = commandHelp(
  `Usage: causeway watch [options] [child...]

  Watches for changes in a given data view from the agent. If a child process
  is specified, it will be invoked with the latest results on changes. Otherwise,
  the latest values are dumped to stdout and the watch terminates.

  Providing the watch type is required, and other parameters may be required
  or supported depending on the watch type.
`,
  FLAGS,
);

/** What the watch takes from the process; tests pass their own (no real sleeps, no real signals). */
export interface WatchDeps extends HttpCommandDeps {
  /** Calls `listener` on SIGINT or SIGTERM; returns the function that stops listening. */
  readonly onInterrupt: (listener: (sig: InterruptSignal) => void) => () => void;
  /** Resolves after `ms`, or at once when `signal` aborts (the back-off after a failed query). */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The time for log lines. */
  readonly now: () => Date;
  readonly spawnHandler: HandlerSpawner;
}

/** Sleeps on `clock`, waking early when `signal` aborts. */
function clockSleep(clock: Clock): WatchDeps["sleep"] {
  return (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        cancel();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const cancel = clock.setTimer(ms, done);
      signal.addEventListener("abort", done);
    });
}

const clock = systemClock();

/** The process environment, fetch, signals, timers and clock. */
export const processWatchDeps: WatchDeps = { ...processHttpDeps, onInterrupt: onProcessInterrupts, sleep: clockSleep(clock), now: () => new Date(clock.now()), spawnHandler };

/** The watch parameters from the flags, as Consul's command fills its `params` map. */
function watchParams(values: ReadonlyMap<string, unknown>, passingOnly: boolean | undefined): WatchParams {
  const text = (name: string) => {
    const v = values.get(name);
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const tags = values.get("tag");
  return {
    type: text("type") ?? "", key: text("key"), prefix: text("prefix"), service: text("service"), state: text("state"), name: text("name"),
    ...(Array.isArray(tags) && tags.length > 0 ? { tag: tags as string[] } : {}),
    ...(values.get("stale") === true ? { stale: true } : {}),
    ...(passingOnly === undefined ? {} : { passingonly: passingOnly }),
  };
}

export function createWatchCommand(deps: WatchDeps = processWatchDeps): Command {
  return {
    name: "watch",
    synopsis: "Watch for changes in Consul",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if ((stringFlag(parsed, "type") ?? "") === "") {
        io.err(`Watch type must be specified\n\n${HELP}`);
        return 1;
      }
      let passingOnly: boolean | undefined;
      const passingText = stringFlag(parsed, "passingonly") ?? "";
      if (passingText !== "") {
        passingOnly = parseGoBool(passingText);
        if (passingOnly === undefined) {
          io.err(`Failed to parse passingonly flag: strconv.ParseBool: parsing ${JSON.stringify(passingText)}: invalid syntax\n`);
          return 1;
        }
      }
      const spec = parseWatchSpec(watchParams(parsed.values, passingOnly));
      if ("error" in spec) {
        io.err(`${spec.error}\n`);
        return 1;
      }
      const stop = new AbortController();
      const baseFetch: FetchFn = deps.fetch ?? fetch;
      const fetchFn: FetchFn = (input, init) => baseFetch(input, { ...init, signal: stop.signal });
      let client: AgentHttpClient;
      try {
        client = agentClientFromFlags(parsed.values, { env: deps.env, fetch: fetchFn });
      } catch (err) {
        io.err(`Error connecting to Consul agent: ${(err as Error).message}\n`);
        return 1;
      }
      // Consul 1.8.15+ (hashicorp/consul#10795) checks the agent is reachable with /v1/status/leader,
      // which needs no ACL token, before it starts blocking.
      try {
        await client.request("GET", "/v1/status/leader");
      } catch (err) {
        io.err(`Error querying Consul agent: ${(err as Error).message}\n`);
        return 1;
      }
      const handler = parsed.rest.length === 0 ? undefined : { argv: handlerArgv(parsed.rest, parsed.values.get("shell") !== false, deps.env()) };
      return watchUntilDone(spec, handler, (lastIndex) => queryWatch(client, spec, lastIndex), stop, deps, io);
    },
  };
}

/** Runs the loop with the handler (or the print-once handler) until it stops or the process is interrupted. */
async function watchUntilDone(
  spec: WatchSpec,
  handler: { readonly argv: readonly string[] } | undefined,
  query: Parameters<typeof runWatchLoop>[0]["query"],
  stop: AbortController,
  deps: WatchDeps,
  io: CommandIo,
): Promise<number> {
  let exitCode = 0;
  let running: RunningHandler | undefined;
  const handle = async (index: bigint, result: unknown): Promise<boolean> => {
    if (!handler) {
      io.out(`${goJson(result, true)}\n`);
      return false;
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(deps.env())) if (v !== undefined) env[k] = v;
    env.CONSUL_INDEX = index.toString();
    running = deps.spawnHandler({ argv: handler.argv, stdin: `${goJson(result)}\n`, env });
    const exit = await running.done;
    running = undefined;
    if (exit.ok || stop.signal.aborted) return !stop.signal.aborted;
    io.err(`${exit.phase === "start" ? "Error starting handler" : "Error executing handler"}: ${exit.message}\n`);
    exitCode = 1;
    return false;
  };
  let unsubscribe = () => {};
  const interrupted = new Promise<InterruptSignal>((resolve) => (unsubscribe = deps.onInterrupt(resolve)));
  const loop = runWatchLoop({
    query,
    handle,
    sleep: deps.sleep,
    onError: (err, retryMs) => io.err(watchErrorLine(deps.now(), spec.type, err, retryMs)),
    signal: stop.signal,
    hashedIndex: spec.type === "event",
  });
  const signal = await Promise.race([loop.then(() => undefined), interrupted]);
  unsubscribe();
  if (signal === undefined) return exitCode;
  // Consul stops the plan and exits 0 at once; the running handler got the signal forwarded.
  stop.abort();
  running?.signal(signal);
  return 0;
}

/** `causeway watch` against the process environment, signals and clock. */
export const watchCommand: Command = createWatchCommand();
