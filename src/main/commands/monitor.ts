/**
 * `causeway monitor`: Consul's `consul monitor` (command/monitor/monitor.go): streams the agent's log
 * lines from `/v1/agent/monitor` at `-log-level` (default INFO; the agent's own level does not limit
 * it), as JSON with `-log-json`, until interrupted (exit 0). When the agent ends the stream (it exited
 * or crashed) the command says so and exits 1; a refused request (a bad level: 400) is
 * `Error starting monitor: ...` and exit 1.
 */
import type { Command } from "../command.ts";
import { parseCommandLine, type FlagSpec } from "../flags.ts";
import { AgentHttpError, HTTP_ADDR_FLAG, HTTP_TOKEN_ENV, processHttpDeps, resolveHttpAddr, TOKEN_FLAG, type HttpCommandDeps } from "./support/http_client.ts";
import { boolFlag, commandHelp, stringFlag } from "./support/http_command.ts";
import { nextProcessInterrupt } from "./support/interrupts.ts";

const FLAGS: FlagSpec[] = [
  { name: "log-level", kind: "string", arg: "<level>", usage: 'Log level of the agent: trace, debug, info, warn or err (Consul\'s names, any case). Default "INFO".' },
  { name: "log-json", kind: "bool", usage: "Output logs in JSON format." },
];

const HELP = commandHelp(`Usage: causeway monitor [options]

  Shows recent log messages of an agent, and attaches to the agent,
  outputting log messages as they occur in real time. The monitor lets you
  listen for log levels that may be filtered out of the agent. For example
  your agent may only be logging at INFO level, but with the monitor you can
  see the DEBUG level logs.`, FLAGS, [HTTP_ADDR_FLAG, TOKEN_FLAG]);

export const REMOTE_ENDED = "Remote side ended the monitor! This usually means that the\nremote side has exited or crashed.";

export interface MonitorDeps extends HttpCommandDeps {
  /** Resolves when the user interrupts (SIGINT or SIGTERM). */
  readonly interrupted: () => Promise<void>;
}

const processInterrupted = () => nextProcessInterrupt().then(() => {});

export function createMonitorCommand(deps: MonitorDeps = { ...processHttpDeps, interrupted: processInterrupted }): Command {
  return {
    name: "monitor",
    synopsis: "Stream logs from an agent",
    async run(argv, io) {
      const parsed = parseCommandLine([HTTP_ADDR_FLAG, TOKEN_FLAG, ...FLAGS], argv, io, HELP, 0);
      if (typeof parsed === "number") return parsed;
      const env = deps.env();
      let base: string;
      try {
        base = resolveHttpAddr(stringFlag(parsed, "http-addr"), env);
      } catch (err) {
        io.err(`Error starting monitor: ${(err as Error).message}\n`);
        return 1;
      }
      const query = new URLSearchParams({ loglevel: stringFlag(parsed, "log-level") ?? "INFO" });
      if (boolFlag(parsed, "log-json")) query.set("logjson", "");
      const token = stringFlag(parsed, "token") ?? HTTP_TOKEN_ENV.map((n) => env[n]).find((v) => v);
      const abort = new AbortController();
      let res: Response;
      try {
        res = await (deps.fetch ?? fetch)(`${base}/v1/agent/monitor?${query}`, { method: "GET", signal: abort.signal, ...(token ? { headers: { "X-Consul-Token": token } } : {}) });
        if (res.status !== 200) throw new AgentHttpError(res.status, (await res.text()).trim());
      } catch (err) {
        io.err(`Error starting monitor: ${(err as Error).message}\n`);
        return 1;
      }
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let quitting = false;
      const streamed = (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            io.out(decoder.decode(value, { stream: true }));
          }
        } catch {
          // the connection broke: the same as the agent ending the stream
        }
      })();
      const ended = await Promise.race([streamed.then(() => "ended" as const), deps.interrupted().then(() => "interrupted" as const)]);
      if (ended === "interrupted") {
        quitting = true;
        abort.abort();
        await reader.cancel().catch(() => {});
        return 0;
      }
      if (!quitting) io.out(`\n${REMOTE_ENDED}\n`);
      return 1;
    },
  };
}

/** `causeway monitor` against the process environment. */
export const monitorCommand: Command = createMonitorCommand();
