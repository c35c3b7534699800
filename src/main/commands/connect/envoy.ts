/**
 * `causeway connect envoy`: Consul 1.8's command/connect/envoy for sidecars and mesh gateways. Finds the
 * proxy (by `-proxy-id`, `-sidecar-for` through GET /v1/agent/services, or `-gateway=mesh`, which can
 * also register the gateway first: envoy_gateway.ts), reads its registration (GET
 * /v1/agent/service/<id>) for the cluster name and the `envoy_*` Proxy.Config keys, builds the Envoy v3
 * bootstrap (envoy_bootstrap.ts), and prints it (`-bootstrap`) or runs Envoy with it (envoy_exec.ts),
 * passing the arguments after `--` to Envoy. Ingress gateways would plug in through `readyBindAddr`.
 */
import { readFile } from "node:fs/promises";
import { lookup } from "node:dns/promises";
import type { Command, CommandIo } from "../../command.ts";
import { UsageError, type FlagSpec, type ParsedFlags } from "../../flags.ts";
import { HTTP_ADDR_FLAG, HTTP_TOKEN_ENV, TOKEN_FLAG, type AgentHttpClient, type Env } from "../support/http_client.ts";
import { boolFlag, clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, stringFlag, usageFailure, type CliDeps } from "../support/index.ts";
import { buildEnvoyBootstrap, type EnvoyBootstrapSettings } from "./envoy_bootstrap.ts";
import { execEnvoy, lookPath } from "./envoy_exec.ts";
import { localInterfaceIps } from "./envoy_gateway_address.ts";
import { GATEWAY_FLAGS, gatewayOptions, gatewayProxy, registerGateway, type GatewayOptions } from "./envoy_gateway.ts";
import { parseAdminBind, parseGrpcAddress, sidecarProxyId } from "./envoy_settings.ts";

/** Consul 1.8's default `-envoy-version` (the newest Envoy it supported), reported in node metadata. */
export const DEFAULT_ENVOY_VERSION = "1.14.2";
const DEFAULT_GRPC_PORT = 8502;
export const GRPC_ADDR_ENV = ["CAUSEWAY_GRPC_ADDR", "CONSUL_GRPC_ADDR"] as const;
export const CA_FILE_ENV = ["CAUSEWAY_CACERT", "CONSUL_CACERT"] as const;

export const CA_FILE_FLAG: FlagSpec = {
  name: "ca-file",
  kind: "string",
  arg: "<path>",
  usage: `Path to a CA file to use for TLS when communicating with the agent. Put into the bootstrap to verify the agent's gRPC port. Also taken from ${CA_FILE_ENV.join(" or ")}.`,
};

const FLAGS: readonly FlagSpec[] = [
  { name: "proxy-id", kind: "string", arg: "<id>", usage: "The proxy's ID on the local agent. Also taken from CONNECT_PROXY_ID." },
  {
    name: "sidecar-for",
    kind: "string",
    arg: "<service-id>",
    usage:
      "The ID of a service instance on the local agent that this proxy should become a sidecar for. It requires that the proxy " +
      "service is registered with the agent as a connect-proxy with Proxy.DestinationServiceID set to this value. If more than " +
      "one such proxy is registered it will fail. Also taken from CONNECT_SIDECAR_FOR.",
  },
  { name: "envoy-binary", kind: "string", arg: "<path>", usage: "The full path to the envoy binary to run. By default will just search $PATH. Ignored if -bootstrap is used." },
  { name: "admin-access-log-path", kind: "string", arg: "<path>", usage: 'The path to write the access log for the administration server. Default "/dev/null".' },
  {
    name: "admin-bind",
    kind: "string",
    arg: "<host:port>",
    usage:
      "The address:port to start envoy's admin server on. Envoy requires this but care must be taken to ensure it's not exposed " +
      'to an untrusted network as it has full control over the secrets and config of the proxy. Default "localhost:19000".',
  },
  { name: "bootstrap", kind: "bool", usage: "Generate the bootstrap.json but don't exec envoy." },
  {
    name: "no-central-config",
    kind: "bool",
    usage:
      "By default the proxy's bootstrap configuration can be customized centrally. This requires that the command run on the same " +
      "agent as the proxy will and that the agent is reachable when the command is run. In cases where either assumption is " +
      "violated this flag will prevent the command attempting to resolve config from the local agent.",
  },
  {
    name: "grpc-addr",
    kind: "string",
    arg: "<address>",
    usage: `Set the agent's gRPC address and port (in http(s)://host:port format, or unix:///path). Also taken from ${GRPC_ADDR_ENV.join(" or ")}.`,
  },
  { name: "envoy-version", kind: "string", arg: "<version>", usage: `Sets the envoy-version that the envoy binary has. Default "${DEFAULT_ENVOY_VERSION}".` },
  ...GATEWAY_FLAGS,
];

const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG, CA_FILE_FLAG];

const HELP = commandHelp(
  `Usage: causeway connect envoy [options] [-- pass-through options]

  Generates the bootstrap configuration needed to start an Envoy proxy instance
  for use as a Connect sidecar for a particular service instance. By default it
  will generate the config and then exec Envoy directly until it exits normally.

  It will search $PATH for the envoy binary but this can be overridden with
  -envoy-binary.

  It can instead only generate the bootstrap.json based on the current ENV and
  arguments using -bootstrap.

  The proxy requires service:write permissions for the service it represents.
  The token may be passed via the CLI or the CONSUL_HTTP_TOKEN environment
  variable.

  The example below shows how to start a local proxy as a sidecar to a "web"
  service instance. It assumes that the proxy was already registered with its
  Config for example via a sidecar_service block.

    $ causeway connect envoy -sidecar-for web

  Additional arguments may be passed directly to Envoy by specifying a double
  dash followed by a list of options.

    $ causeway connect envoy -sidecar-for web -- --log-level debug

  The example below registers a mesh gateway with the local agent, listening on
  a LAN address and advertising a WAN address to other datacenters, and runs
  Envoy as that gateway. Without -register it runs the mesh gateway already
  registered with the agent.

    $ causeway connect envoy -gateway=mesh -register \\
        -address 10.0.0.5:8443 -wan-address 203.0.113.5:8443
`,
  FLAGS,
  HTTP_FLAGS,
);

/** The first non-empty of `flag` and the named environment variables. */
export function fromFlagOrEnv(flag: string | undefined, env: Env, names: readonly string[]): string | undefined {
  return flag ?? names.map((n) => env[n]).find((v) => v !== undefined && v !== "");
}

/**
 * The gRPC address when none is given: `localhost:<DebugConfig.GRPCPort>` from /v1/agent/self (Consul
 * 1.8's lookupGRPCPort), else port 8502 with a warning. Warnings go to stderr so `-bootstrap` output
 * stays pure JSON.
 */
export async function defaultGrpcAddr(client: AgentHttpClient, io: CommandIo): Promise<string> {
  let port = 0;
  try {
    const self = (await client.getJson("/v1/agent/self")) as { DebugConfig?: { GRPCPort?: unknown } } | null;
    const p = self?.DebugConfig?.GRPCPort;
    if (typeof p === "number") port = p;
  } catch (err) {
    io.err(`Error connecting to Consul agent: ${(err as Error).message}\n`);
  }
  if (port <= 0) {
    port = DEFAULT_GRPC_PORT;
    io.err(`WARNING: -grpc-addr not provided and unable to discover a gRPC address for xDS. Defaulting to localhost:${port}\n`);
  }
  return `localhost:${port}`;
}

/** The proxy registration's cluster name and Proxy.Config (Consul's generateConfig). */
async function proxyRegistration(client: AgentHttpClient, proxyId: string): Promise<{ cluster?: string; config?: Record<string, unknown> }> {
  let svc: { Service?: unknown; Proxy?: { DestinationServiceName?: unknown; Config?: unknown } | null };
  try {
    svc = (await client.getJson(`/v1/agent/service/${encodeURIComponent(proxyId)}`)) as typeof svc;
  } catch (err) {
    throw new Error(`failed fetch proxy config from local agent: ${(err as Error).message}`);
  }
  if (!svc?.Proxy) throw new Error("service is not a Connect proxy or gateway");
  const dest = svc.Proxy.DestinationServiceName;
  const config = svc.Proxy.Config;
  return {
    ...(typeof dest === "string" && dest !== "" ? { cluster: dest } : {}),
    ...(typeof config === "object" && config !== null && !Array.isArray(config) ? { config: config as Record<string, unknown> } : {}),
  };
}

/**
 * The agent's gRPC address (`-grpc-addr`, CONSUL_GRPC_ADDR, else the agent's own port), whether it uses
 * TLS, and the CA file's PEM (`-ca-file` / CONSUL_CACERT) if one was given. Throws Consul's errors.
 */
export async function resolveAgentGrpc(parsed: ParsedFlags, client: AgentHttpClient, env: Env, io: CommandIo): Promise<{ grpc: ReturnType<typeof parseGrpcAddress>; caPem?: string }> {
  const grpcAddr = fromFlagOrEnv(stringFlag(parsed, "grpc-addr"), env, GRPC_ADDR_ENV) ?? (await defaultGrpcAddr(client, io));
  const caFile = fromFlagOrEnv(stringFlag(parsed, "ca-file"), env, CA_FILE_ENV);
  const grpc = parseGrpcAddress({ grpcAddr, caFileGiven: !!caFile, httpSslEnv: env.CONSUL_HTTP_SSL, httpAddrIsHttps: client.baseUrl.startsWith("https:") });
  if (!caFile) return { grpc };
  try {
    return { grpc, caPem: await readFile(caFile, "utf8") };
  } catch (err) {
    throw new Error(`Failed to read CA file: ${(err as Error).message}`);
  }
}

/** Resolves a host name for the admin bind (Go's net.ResolveIPAddr). */
export async function resolveAdminHost(host: string): Promise<string> {
  try {
    return (await lookup(host)).address;
  } catch (err) {
    throw new Error(`Failed to resolve admin bind address: ${(err as Error).message}`);
  }
}

/** What the command runs as, decided before it talks to the agent. */
interface Target {
  /** `-proxy-id` or CONNECT_PROXY_ID ("" when neither). */
  readonly proxyIdFlag: string;
  /** `-sidecar-for` or CONNECT_SIDECAR_FOR ("" when neither). */
  readonly sidecarFor: string;
  /** Set for `-gateway=mesh` (or `-mesh-gateway`). */
  readonly gateway?: GatewayOptions;
}

/**
 * The proxy ID (Envoy's node id) and the node cluster to use unless the registration names one:
 * the gateway's (envoy_gateway.ts), `-proxy-id`, or the one sidecar for `-sidecar-for` (looked up
 * through GET /v1/agent/services). Throws Consul's errors.
 */
async function resolveProxy(client: AgentHttpClient, t: Target): Promise<{ proxyId: string; cluster: string }> {
  if (t.gateway) {
    const gw = await gatewayProxy(client, t.gateway, t.proxyIdFlag);
    return { proxyId: gw.proxyId, cluster: gw.service };
  }
  if (t.proxyIdFlag) return { proxyId: t.proxyIdFlag, cluster: t.sidecarFor || t.proxyIdFlag };
  if (!t.sidecarFor) throw new Error("No proxy ID specified. One of -proxy-id, -sidecar-for, or -gateway is required");
  let services: unknown;
  try {
    services = await client.getJson("/v1/agent/services");
  } catch (err) {
    throw new Error(`Failed looking up sidecar proxy info for ${t.sidecarFor}: ${(err as Error).message}`);
  }
  return { proxyId: sidecarProxyId(services, t.sidecarFor), cluster: t.sidecarFor };
}

/**
 * Everything up to the bootstrap JSON; throws an Error whose message is for the user. A gateway is
 * registered (`-register`) once the proxy ID is known and the local inputs (gRPC address, CA file, admin
 * bind) have been checked, so a command that is bound to fail registers nothing (Consul registers first).
 */
async function generate(parsed: ParsedFlags, t: Target, client: AgentHttpClient, env: Env, io: CommandIo, hostIps: () => readonly string[]): Promise<string> {
  const { proxyId, cluster } = await resolveProxy(client, t);
  const { grpc, caPem } = await resolveAgentGrpc(parsed, client, env, io);
  if (grpc.tls && !caPem) io.err("WARNING: the agent's gRPC port uses TLS but no CA file was given (-ca-file); Envoy will not verify its certificate.\n");
  const admin = parseAdminBind(stringFlag(parsed, "admin-bind") ?? "localhost:19000");
  const adminAddress = admin.needsLookup ? await resolveAdminHost(admin.host) : admin.host;
  if (t.gateway?.register) await registerGateway(client, t.gateway, proxyId, hostIps(), io, boolFlag(parsed, "bootstrap"));
  const reg = boolFlag(parsed, "no-central-config") ? {} : await proxyRegistration(client, proxyId);
  const settings: EnvoyBootstrapSettings = {
    proxyId,
    proxyCluster: reg.cluster ?? cluster,
    namespace: "default",
    envoyVersion: stringFlag(parsed, "envoy-version") ?? DEFAULT_ENVOY_VERSION,
    adminAccessLogPath: stringFlag(parsed, "admin-access-log-path") || "/dev/null",
    adminAddress,
    adminPort: admin.port,
    agent: grpc.target,
    ...(grpc.tls ? { agentTls: caPem ? { caPem } : {} } : {}),
    token: fromFlagOrEnv(stringFlag(parsed, "token"), env, HTTP_TOKEN_ENV) ?? "",
    env,
  };
  return JSON.stringify(buildEnvoyBootstrap(settings, reg.config), null, 2);
}

/** The flags' target; on a bad gateway flag prints Consul's error (with the help for a bad value) and returns 1. */
function targetOrExit(parsed: ParsedFlags, env: Env, io: CommandIo): Target | number {
  const sidecarFor = fromFlagOrEnv(stringFlag(parsed, "sidecar-for"), env, ["CONNECT_SIDECAR_FOR"]) ?? "";
  const proxyIdFlag = fromFlagOrEnv(stringFlag(parsed, "proxy-id"), env, ["CONNECT_PROXY_ID"]) ?? "";
  try {
    const gateway = gatewayOptions(parsed, sidecarFor);
    return { proxyIdFlag, sidecarFor, ...(gateway ? { gateway } : {}) };
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
    io.err(`${(err as Error).message}\n`);
    return 1;
  }
}

const NO_ENVOY_HINT =
  "Use the -bootstrap option to print the bootstrap JSON instead, and run Envoy with it yourself " +
  "(envoy --config-path <file>), for example in a container or VM that has Envoy.\n";

/**
 * Builds `causeway connect envoy` over the given environment and fetch. `hostIps` lists this host's
 * interface addresses (for a registering gateway's bind decision); tests pass their own.
 */
export function createConnectEnvoyCommand(deps: CliDeps = processCliDeps, hostIps: () => readonly string[] = localInterfaceIps): Command {
  return {
    name: "envoy",
    synopsis: "Runs or Configures Envoy as a Connect proxy",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const env = deps.env();
      const target = targetOrExit(parsed, env, io);
      if (typeof target === "number") return target;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let json: string;
      try {
        json = await generate(parsed, target, client, env, io, hostIps);
      } catch (err) {
        io.err(`${(err as Error).message}\n`);
        return 1;
      }
      if (boolFlag(parsed, "bootstrap")) {
        io.out(`${json}\n`);
        return 0;
      }
      let binary: string;
      try {
        binary = stringFlag(parsed, "envoy-binary") || lookPath("envoy", env.PATH);
      } catch (err) {
        io.err(`Couldn't find envoy binary: ${(err as Error).message}\n${NO_ENVOY_HINT}`);
        return 1;
      }
      try {
        return await execEnvoy(binary, json, parsed.rest);
      } catch (err) {
        io.err(`${(err as Error).message}\n${NO_ENVOY_HINT}`);
        return 1;
      }
    },
  };
}
