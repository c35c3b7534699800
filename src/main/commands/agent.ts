import { hostname } from "node:os";
import { createLogger, LogTaps, parseLogLevel, readHostNetwork } from "../../platform/index.ts";
import { startAgent } from "../agent.ts";
import type { Command, CommandIo } from "../command.ts";
import { buildConfig, ConfigError, defaultConfig, DEV_SOURCE, readConfigSources, type ConfigSource, type HostReader, type RuntimeConfig } from "../config.ts";
import { formatFlags, parseFlags, UsageError, type FlagSpec, type ParsedFlags } from "../flags.ts";
import { VERSION } from "../version.ts";
import { parseDuration } from "../../lib/index.ts";

const TEMPLATES = "A go-sockaddr template is evaluated";

const FLAGS: FlagSpec[] = [
  { name: "dev", kind: "bool", usage: "Development mode: a single server in a temporary data directory, everything on loopback. Never use it in production." },
  { name: "server", kind: "bool", usage: "Run as a server (keeps state in Raft) rather than a client agent." },
  { name: "datacenter", kind: "string", arg: "<dc>", usage: 'Datacenter of the agent. Default "dc1".' },
  { name: "node", kind: "string", arg: "<name>", usage: "Name of this node; unique in the cluster. Default: the host name." },
  { name: "node-id", kind: "string", arg: "<uuid>", usage: "Node ID (UUID). Default: read from or written to <data-dir>/node-id." },
  { name: "data-dir", kind: "string", arg: "<path>", usage: "Directory for persistent state. Required except with -dev." },
  {
    name: "bind",
    kind: "string",
    arg: "<addr>",
    usage: `Address for cluster communication (server port, gossip). Default "0.0.0.0". ${TEMPLATES}, e.g. '{{ GetPrivateIP }}' or '{{ GetInterfaceIP "eth0" }}'.`,
  },
  { name: "advertise", kind: "string", arg: "<addr>", usage: `Address advertised to other agents. Default: the bind address, or the first private IPv4 address. ${TEMPLATES}.` },
  { name: "client", kind: "string", arg: "<addr>", usage: `Address of the client interfaces (HTTP, gRPC, DNS). Default "127.0.0.1". ${TEMPLATES}.` },
  { name: "http-port", kind: "int", arg: "<port>", usage: "HTTP API port. Default 8500; -1 disables." },
  { name: "grpc-port", kind: "int", arg: "<port>", usage: "gRPC (xDS) port. Default 8502 with -dev, else disabled (-1)." },
  { name: "server-port", kind: "int", arg: "<port>", usage: "Server RPC port. Default 8300." },
  { name: "ui", kind: "bool", usage: "Serves the web UI at /ui/ on the HTTP port (on with -dev)." },
  { name: "dns-port", kind: "int", arg: "<port>", usage: "DNS port (UDP and TCP). Default 8600; -1 disables." },
  { name: "domain", kind: "string", arg: "<domain>", usage: 'DNS domain. Default "consul".' },
  { name: "alt-domain", kind: "string", arg: "<domain>", usage: "A second DNS domain answered like -domain." },
  { name: "recursor", kind: "strings", arg: "<addr>", usage: "Upstream DNS server (ip or ip:port) for names outside the domain; can be given more than once." },
  { name: "serf-lan-port", kind: "int", arg: "<port>", usage: "LAN gossip port (UDP and TCP). Default 8301." },
  { name: "serf-wan-port", kind: "int", arg: "<port>", usage: "WAN gossip port of servers (UDP and TCP). Default 8302; -1 disables." },
  { name: "advertise-wan", kind: "string", arg: "<addr>", usage: `Address advertised in the WAN pool. Default: the advertise address. ${TEMPLATES}.` },
  { name: "join", kind: "strings", arg: "<addr>", usage: "Address of an agent to join at start; failure stops the agent. A go-sockaddr template may give several." },
  { name: "retry-join", kind: "strings", arg: "<addr>", usage: "Address of an agent to join, retried until it succeeds. A go-sockaddr template may give several." },
  { name: "retry-join-wan", kind: "strings", arg: "<addr>", usage: "Address of a server in another datacenter to join over the WAN pool, retried." },
  {
    name: "primary-gateway",
    kind: "strings",
    arg: "<addr>",
    usage: "Address (host:port) of a mesh gateway in the primary datacenter, used by a secondary's servers to federate through mesh gateways; retried every primary_gateways_interval. Can be given more than once.",
  },
  { name: "retry-interval", kind: "string", arg: "<duration>", usage: 'Time between join attempts. Default "30s".' },
  { name: "retry-interval-wan", kind: "string", arg: "<duration>", usage: 'Time between WAN join attempts. Default "30s".' },
  { name: "retry-max", kind: "int", arg: "<n>", usage: "Join attempts before giving up; 0 retries forever." },
  { name: "encrypt", kind: "string", arg: "<key>", usage: "Gossip encryption key (base64, as made by causeway keygen)." },
  { name: "bootstrap-expect", kind: "int", arg: "<n>", usage: "Number of servers to wait for before bootstrapping the cluster." },
  { name: "log-level", kind: "string", arg: "<level>", usage: 'trace, debug, info, warn or error. Default "info" ("debug" with -dev).' },
  { name: "log-json", kind: "bool", usage: "Write logs as JSON lines." },
  { name: "enable-script-checks", kind: "bool", usage: "Enables health check scripts (script and Docker checks) from config files and the HTTP API." },
  { name: "enable-local-script-checks", kind: "bool", usage: "Enables health check scripts from config files only." },
  { name: "config-file", kind: "strings", arg: "<path>", usage: "A JSON config file with Consul's field names." },
  { name: "config-dir", kind: "strings", arg: "<path>", usage: "A directory whose *.json files are read in lexical order (an *.hcl file there is refused: Causeway reads JSON only)." },
];

const HELP = `Usage: causeway agent [options]

  Starts the Causeway agent and runs until it receives SIGINT or SIGTERM.
  Sources merge in this order, later ones winning: defaults, -dev, config files and
  directories (in the order given), then the other flags.

Options:

${formatFlags(FLAGS)}
`;

/** Turns the command line into a config source, in the order Consul gives flags (after files). */
function flagSource(p: ParsedFlags): ConfigSource {
  const s: ConfigSource = {};
  const v = p.values;
  const str = (k: string) => v.get(k) as string | undefined;
  const int = (k: string) => v.get(k) as number | undefined;
  if (v.has("server")) s.server = v.get("server") as boolean;
  if (v.has("datacenter")) s.datacenter = str("datacenter");
  if (v.has("node")) s.nodeName = str("node");
  if (v.has("node-id")) s.nodeId = str("node-id");
  if (v.has("data-dir")) s.dataDir = str("data-dir");
  if (v.has("bind")) s.bindAddr = str("bind");
  if (v.has("advertise")) s.advertiseAddr = str("advertise");
  if (v.has("client")) s.clientAddr = str("client");
  if (v.has("domain")) s.domain = str("domain");
  if (v.has("bootstrap-expect")) s.bootstrapExpect = int("bootstrap-expect");
  if (v.has("log-level")) s.logLevel = str("log-level");
  if (v.has("log-json")) s.logJson = v.get("log-json") as boolean;
  if (v.has("enable-script-checks")) s.enableScriptChecks = v.get("enable-script-checks") as boolean;
  if (v.has("enable-local-script-checks")) s.enableLocalScriptChecks = v.get("enable-local-script-checks") as boolean;
  const gossip: Record<string, unknown> = {};
  const list = (k: string) => (v.get(k) as string[] | undefined) ?? [];
  if (v.has("join")) gossip.startJoin = list("join");
  if (v.has("retry-join")) gossip.retryJoin = list("retry-join");
  if (v.has("retry-join-wan")) gossip.retryJoinWan = list("retry-join-wan");
  if (v.has("primary-gateway")) s.federation = { primaryGateways: list("primary-gateway") };
  for (const [flag, key] of [["retry-interval", "retryIntervalMs"], ["retry-interval-wan", "retryIntervalWanMs"]] as const) {
    if (!v.has(flag)) continue;
    try {
      gossip[key] = parseDuration(str(flag)!);
    } catch {
      throw new UsageError(`invalid value "${str(flag)}" for flag -${flag}: not a duration such as "30s"`);
    }
  }
  if (v.has("retry-max")) gossip.retryMax = int("retry-max");
  if (v.has("encrypt")) gossip.encrypt = str("encrypt");
  if (v.has("advertise-wan")) gossip.advertiseAddrWan = str("advertise-wan");
  if (Object.keys(gossip).length) s.gossip = gossip;
  const ports: Record<string, number> = {};
  for (const [flag, key] of [["http-port", "http"], ["grpc-port", "grpc"], ["server-port", "server"], ["serf-lan-port", "serfLan"], ["serf-wan-port", "serfWan"], ["dns-port", "dns"]] as const) {
    const port = int(flag);
    if (port === undefined) continue;
    if (port < -1 || port > 65535) throw new UsageError(`invalid value "${port}" for flag -${flag}: not a port number`);
    ports[key] = port;
  }
  if (Object.keys(ports).length) s.ports = ports;
  const dns = { ...(v.has("recursor") ? { recursors: list("recursor") } : {}), ...(v.has("alt-domain") ? { altDomain: str("alt-domain")! } : {}) };
  if (Object.keys(dns).length) s.dns = dns;
  if (v.get("ui") === true) s.ui = { enabled: true };
  return s;
}

/** Parses flags and config files into the runtime config; errors are UsageError or ConfigError. */
export function loadAgentConfig(argv: readonly string[]): { config?: RuntimeConfig; help: boolean } {
  const parsed = parseFlags(FLAGS, argv);
  if (parsed.help) return { help: true };
  if (parsed.rest.length) throw new UsageError(`unexpected argument "${parsed.rest[0]}"`);
  const files = [
    ...((parsed.values.get("config-file") as string[] | undefined) ?? []).map((path) => ({ kind: "file" as const, path })),
    ...((parsed.values.get("config-dir") as string[] | undefined) ?? []).map((path) => ({ kind: "dir" as const, path })),
  ];
  const sources: ConfigSource[] = [];
  if (parsed.values.get("dev") === true) sources.push(DEV_SOURCE);
  sources.push(...readConfigSources(files), flagSource(parsed));
  return { config: buildAgentConfig(sources), help: false };
}

/**
 * The agent's runtime config from its sources over the defaults, checked as the agent checks it before
 * starting (`causeway validate` runs the same, so it evaluates go-sockaddr templates in address settings
 * over this host's interfaces, read through `readHost`, as `consul validate` does). Throws ConfigError
 * naming the first problem.
 */
export function buildAgentConfig(sources: readonly ConfigSource[], readHost: HostReader = readHostNetwork): RuntimeConfig {
  const config = buildConfig(defaultConfig(hostname()), sources, readHost);
  if (!parseLogLevel(config.logLevel)) throw new ConfigError(`log_level "${config.logLevel}" is not one of trace, debug, info, warn, error`);
  return config;
}

export const agentCommand: Command = {
  name: "agent",
  synopsis: "Runs a Causeway agent",
  async run(argv, io) {
    let loaded;
    try {
      loaded = loadAgentConfig(argv);
    } catch (err) {
      if (err instanceof UsageError || err instanceof ConfigError) {
        io.err(`==> ${err.message}\n` + (err instanceof UsageError ? `\n${HELP}` : ""));
        return 1;
      }
      throw err;
    }
    if (loaded.help || !loaded.config) {
      io.out(HELP);
      return 0;
    }
    return runUntilSignalled(loaded.config, io, () => loadAgentConfig(argv).config!);
  },
};

async function runUntilSignalled(config: RuntimeConfig, io: CommandIo, reread: () => RuntimeConfig): Promise<number> {
  const logTaps = new LogTaps();
  const logLevel = { level: parseLogLevel(config.logLevel)! };
  const logger = createLogger("agent", {
    level: logLevel,
    format: config.logJson ? "json" : "text",
    sink: (line) => io.err(line + "\n"),
    taps: logTaps,
  });
  let agent;
  let left: (() => void) | undefined;
  try {
    agent = await startAgent(config, logger, { onLeft: () => left?.(), logTaps, reread, logLevel });
  } catch (err) {
    io.err(`==> Error starting agent: ${(err as Error).message}\n`);
    return 1;
  }
  const a = agent.addresses;
  io.out(
    `==> Causeway agent running!\n` +
      `           Version: '${VERSION}'\n` +
      `           Node ID: '${agent.nodeId}'\n` +
      `         Node name: '${config.nodeName}'\n` +
      `        Datacenter: '${config.datacenter}'\n` +
      `            Server: ${config.server}\n` +
      `       Client Addr: HTTP: ${a.http ?? "disabled"}, gRPC: ${a.grpc ?? "disabled"}, DNS: ${a.dns ?? "disabled"}\n` +
      `      Cluster Addr: ${a.server ?? "disabled"} (LAN: ${a.serfLan ?? "disabled"}, WAN: ${a.serfWan ?? "disabled"})\n` +
      `          Data Dir: ${agent.dataDir}${config.dev ? " (temporary, removed at exit)" : ""}\n\n` +
      `==> Log data will now stream in as it occurs:\n\n`,
  );
  // SIGHUP reloads the configuration, as Consul's agent does; the outcome is logged.
  const running = agent;
  const onHangup = () => void running.reload().catch((err: Error) => logger.error("reload failed", { error: err.message }));
  process.on("SIGHUP", onHangup);
  const signal = await new Promise<string>((resolve) => {
    const onSignal = (name: string) => () => resolve(name);
    process.once("SIGINT", onSignal("SIGINT"));
    process.once("SIGTERM", onSignal("SIGTERM"));
    // The leave request's HTTP response goes out after leave() resolves; shut down a moment later.
    left = () => void setTimeout(() => resolve("leave"), 200);
  });
  // From here on a SIGHUP is ignored (a listener stays, or its default action would end the process mid-shutdown).
  process.off("SIGHUP", onHangup);
  process.on("SIGHUP", () => logger.info("reload skipped: the agent is shutting down"));
  io.err(signal === "leave" ? "==> Left the cluster; shutting down\n" : `==> Caught signal: ${signal}\n==> Gracefully shutting down (send it again to exit at once)\n`);
  const force = () => process.exit(1);
  process.once("SIGINT", force);
  process.once("SIGTERM", force);
  await agent.shutdown();
  return 0;
}
