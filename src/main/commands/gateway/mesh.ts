/**
 * `causeway gateway mesh`: the built-in mesh gateway data plane (src/gateway) instead of Envoy. Takes the
 * flags of `connect envoy -gateway=mesh` (-register, -service, -address, -wan-address, -bind-address,
 * -deregister-after-critical, -proxy-id, -grpc-addr, -admin-bind, -ca-file, -http-addr, -token),
 * registers the gateway exactly as that command does, then runs the data plane in this process: an ADS
 * stream (delta; `-xds-protocol sotw` for state of the world) to the agent's gRPC port, the SNI proxy on
 * the listeners the agent configures, and the admin endpoint on `-admin-bind`. Runs until SIGINT or
 * SIGTERM.
 */
import type { Command, CommandIo } from "../../command.ts";
import { UsageError, type FlagSpec, type ParsedFlags } from "../../flags.ts";
import { cryptoRng, createLogger, parseLogLevel, systemClock } from "../../../platform/index.ts";
import { startMeshGatewayDataPlane } from "../../../gateway/index.ts";
import { VERSION } from "../../version.ts";
import { HTTP_ADDR_FLAG, HTTP_TOKEN_ENV, TOKEN_FLAG, type AgentHttpClient, type Env } from "../support/http_client.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, stringFlag, usageFailure, type CliDeps } from "../support/index.ts";
import { CA_FILE_FLAG, fromFlagOrEnv, GRPC_ADDR_ENV, resolveAdminHost, resolveAgentGrpc } from "../connect/envoy.ts";
import { localInterfaceIps } from "../connect/envoy_gateway_address.ts";
import { GATEWAY_FLAGS, gatewayOptions, gatewayProxy, registerGateway, type GatewayOptions } from "../connect/envoy_gateway.ts";
import { parseAdminBind } from "../connect/envoy_settings.ts";

const FLAGS: readonly FlagSpec[] = [
  ...GATEWAY_FLAGS.filter((f) => f.name !== "gateway" && f.name !== "mesh-gateway"),
  { name: "proxy-id", kind: "string", arg: "<id>", usage: "The gateway's service ID on the local agent (Envoy's node id). Default: the -service name." },
  {
    name: "grpc-addr",
    kind: "string",
    arg: "<address>",
    usage: `The agent's gRPC address (http(s)://host:port). Default: localhost and the agent's gRPC port. Also taken from ${GRPC_ADDR_ENV.join(" or ")}.`,
  },
  { name: "admin-bind", kind: "string", arg: "<host:port>", usage: 'Where the admin endpoint (/ready, /stats, /clusters, /config_dump) listens. Default "localhost:19000".' },
  { name: "xds-protocol", kind: "string", arg: "<delta|sotw>", usage: 'The xDS variant to ask the agent for: "delta" (default) or "sotw" (state of the world).' },
  { name: "log-level", kind: "string", arg: "<level>", usage: 'Log level: trace, debug, info (default), warn or error.' },
];

const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG, CA_FILE_FLAG];

const HELP = commandHelp(
  `Usage: causeway gateway mesh [options]

  Runs a mesh gateway without Envoy: Causeway's own data plane routes TLS
  connections between datacenters by their SNI, configured by the local
  agent over xDS exactly as an Envoy mesh gateway would be.

  Register the gateway with the local agent and run it:

    $ causeway gateway mesh -register -address 10.0.0.5:8443 -wan-address 198.51.100.5:443

  The admin endpoint (-admin-bind) answers /ready, /stats (also
  ?format=prometheus), /clusters and /config_dump.
`,
  FLAGS,
  HTTP_FLAGS,
);

interface Settings {
  readonly gateway: GatewayOptions;
  readonly proxyIdFlag: string;
  readonly protocol: "delta" | "sotw";
  readonly logLevel: string;
}

/** The flags checked before anything talks to the agent; throws UsageError or Error with the user's message. */
function settingsOf(parsed: ParsedFlags, env: Env): Settings {
  const gateway = gatewayOptions(parsed, "", "mesh")!;
  const protocol = stringFlag(parsed, "xds-protocol") ?? "delta";
  if (protocol !== "delta" && protocol !== "sotw") throw new UsageError(`invalid value ${JSON.stringify(protocol)} for flag -xds-protocol: must be "delta" or "sotw"`);
  const logLevel = stringFlag(parsed, "log-level") ?? "info";
  if (!parseLogLevel(logLevel)) throw new UsageError(`invalid value ${JSON.stringify(logLevel)} for flag -log-level: must be trace, debug, info, warn or error`);
  return { gateway, proxyIdFlag: fromFlagOrEnv(stringFlag(parsed, "proxy-id"), env, ["CONNECT_PROXY_ID"]) ?? "", protocol, logLevel };
}

/** Registers (with -register) and starts the data plane; resolves with its closer. Throws a user-facing Error. */
async function start(parsed: ParsedFlags, s: Settings, client: AgentHttpClient, env: Env, io: CommandIo, hostIps: () => readonly string[]) {
  const { grpc, caPem } = await resolveAgentGrpc(parsed, client, env, io);
  if (grpc.target.kind === "unix") throw new Error("-grpc-addr: unix sockets are not supported by the built-in gateway; give host:port");
  if (grpc.tls && !caPem) throw new Error("-ca-file: the agent's gRPC port uses TLS; give the CA that signed its certificate");
  const admin = parseAdminBind(stringFlag(parsed, "admin-bind") ?? "localhost:19000");
  const adminHost = admin.needsLookup ? await resolveAdminHost(admin.host) : admin.host;
  const gw = await gatewayProxy(client, s.gateway, s.proxyIdFlag);
  if (s.gateway.register) await registerGateway(client, s.gateway, gw.proxyId, hostIps(), io, false);
  const host = grpc.target.kind === "ip" ? grpc.target.address : grpc.target.host;
  const logger = createLogger("gateway", { level: parseLogLevel(s.logLevel)! });
  const token = fromFlagOrEnv(stringFlag(parsed, "token"), env, HTTP_TOKEN_ENV);
  const plane = await startMeshGatewayDataPlane({
    xds: { host, port: grpc.target.port, protocol: s.protocol, ...(token ? { token } : {}), ...(grpc.tls && caPem ? { tls: { ca: caPem, serverName: grpc.target.kind === "dns" ? host : "localhost" } } : {}) },
    node: { id: gw.proxyId, cluster: gw.service },
    version: VERSION,
    admin: { host: adminHost, port: admin.port },
    clock: systemClock(),
    rng: cryptoRng(),
    logger,
  });
  io.out(`==> Causeway mesh gateway running!\n       Service: '${gw.service}' (ID '${gw.proxyId}')\n          xDS: ${host}:${grpc.target.port} (${s.protocol}${grpc.tls ? ", TLS" : ""})\n        Admin: ${plane.admin!.host}:${plane.admin!.port}\n\n`);
  return plane;
}

/** Builds `causeway gateway mesh`. `hostIps` lists this host's interface addresses (the bind decision of -register). */
export function createGatewayMeshCommand(deps: CliDeps = processCliDeps, hostIps: () => readonly string[] = localInterfaceIps): Command {
  return {
    name: "mesh",
    synopsis: "Runs the built-in mesh gateway (no Envoy needed)",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const env = deps.env();
      let settings: Settings;
      try {
        settings = settingsOf(parsed, env);
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        io.err(`${(err as Error).message}\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let plane;
      try {
        plane = await start(parsed, settings, client, env, io, hostIps);
      } catch (err) {
        io.err(`${(err as Error).message}\n`);
        return 1;
      }
      const signal = await new Promise<string>((resolve) => {
        process.once("SIGINT", () => resolve("SIGINT"));
        process.once("SIGTERM", () => resolve("SIGTERM"));
      });
      io.err(`==> Caught signal: ${signal}; shutting down\n`);
      await plane.close();
      return 0;
    },
  };
}
