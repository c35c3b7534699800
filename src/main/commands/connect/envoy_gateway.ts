/**
 * What `causeway connect envoy -gateway=mesh` does with the agent before the bootstrap is built (Consul
 * 1.8's command/connect/envoy/envoy.go run, and LookupGatewayProxy in command/connect/proxy): chooses the
 * proxy ID, finds an already registered gateway, and with `-register` registers the gateway service.
 */
import type { CommandIo } from "../../command.ts";
import { WAN_FEDERATION_META_KEY } from "../../../federation/index.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { canBind, joinHostPort, type ServiceAddress } from "./envoy_gateway_address.ts";
import type { GatewayOptions } from "./envoy_gateway_flags.ts";

export { GATEWAY_FLAGS, gatewayOptions, type GatewayOptions } from "./envoy_gateway_flags.ts";

/** The gateway's proxy ID (Envoy's node id) and the service name (Envoy's node cluster). */
export interface GatewayProxy {
  readonly proxyId: string;
  readonly service: string;
}

/**
 * Consul's LookupGatewayProxy: the one service of `kind` on the local agent (GET /v1/agent/services with
 * a Kind filter). Throws Consul's errors for a failed request, for none and for several.
 */
export async function lookupGatewayProxy(client: AgentHttpClient, kind: string): Promise<GatewayProxy> {
  let services: unknown;
  try {
    services = await client.getJson("/v1/agent/services", { filter: `Kind == \`${kind}\`` });
  } catch (err) {
    throw new Error(`Failed looking up ${kind} instances: ${(err as Error).message}`);
  }
  const all = typeof services === "object" && services !== null ? Object.values(services as Record<string, { ID?: unknown; Service?: unknown }>) : [];
  if (all.length === 0) throw new Error(`No ${kind} services registered with this agent`);
  if (all.length > 1) throw new Error(`Cannot lookup the ${kind}'s proxy ID because multiple are registered with the agent`);
  const svc = all[0]!;
  return { proxyId: String(svc.ID ?? ""), service: String(svc.Service ?? "") };
}

/**
 * The gateway's proxy ID and service name, as Consul 1.8 picks them: `-proxy-id` (with `-service` or the
 * default name); else, with `-register`, the service name as the ID too; else the one gateway of the
 * kind registered with the agent (its own ID and name, whatever `-service` says).
 */
export async function gatewayProxy(client: AgentHttpClient, opts: GatewayOptions, proxyIdFlag: string): Promise<GatewayProxy> {
  if (proxyIdFlag !== "") return { proxyId: proxyIdFlag, service: opts.service };
  if (opts.register) return { proxyId: opts.service, service: opts.service };
  return lookupGatewayProxy(client, opts.kind);
}

/**
 * The Proxy.Config that tells the gateway where to listen (Consul 1.8): with `-bind-address`, only those
 * addresses (`envoy_gateway_no_default_bind` + `envoy_gateway_bind_addresses`); else, when the LAN and
 * WAN addresses are both this host's, listeners on the tagged addresses
 * (`envoy_gateway_bind_tagged_addresses`); else none (a listener on the service address). Throws
 * Consul's error for a LAN address that this host cannot bind.
 */
function bindConfig(opts: GatewayOptions, hostIps: readonly string[]): Record<string, unknown> | undefined {
  if (opts.bindAddresses.length > 0) {
    return { envoy_gateway_bind_addresses: Object.fromEntries(opts.bindAddresses), envoy_gateway_no_default_bind: true };
  }
  const lanBindable = canBind(opts.lan.Address, hostIps);
  if (lanBindable && canBind(opts.wan.Address, hostIps)) return { envoy_gateway_bind_tagged_addresses: true, envoy_gateway_no_default_bind: true };
  if (!lanBindable && opts.lan.Address !== "") {
    throw new Error(
      `The LAN address ${JSON.stringify(opts.lan.Address)} will not be bindable. Either set a bindable address or override the bind addresses with -bind-address`,
    );
  }
  return undefined;
}

/**
 * The body of PUT /v1/agent/service/register for the gateway, byte for byte as Consul 1.8's Go client
 * sends its api.AgentServiceRegistration: fields in struct order, empty ones omitted as `omitempty`
 * omits them (`Checks` has no omitempty and is null; a Proxy carries empty MeshGateway and Expose
 * objects), map keys sorted, a trailing newline. The TCP check dials the LAN address, or 127.0.0.1 when
 * none was given (the gateway shares the agent's network namespace). With `-expose-servers` the only
 * difference is `Meta: {"consul-wan-federation": "1"}` (after TaggedAddresses, as the struct orders it).
 * `hostIps` are this host's interface addresses, for the bind decision. Throws when the LAN address is
 * not bindable (see bindConfig).
 */
export function gatewayRegistrationBody(opts: GatewayOptions, proxyId: string, hostIps: readonly string[]): string {
  const tagged: Record<string, ServiceAddress> = {};
  if (opts.lan.Address !== "") tagged.lan = opts.lan;
  if (opts.wan.Address !== "") tagged.wan = opts.wan;
  const config = bindConfig(opts, hostIps);
  const body: Record<string, unknown> = { Kind: opts.kind, ID: proxyId, Name: opts.service };
  if (opts.lan.Port !== 0) body.Port = opts.lan.Port;
  if (opts.lan.Address !== "") body.Address = opts.lan.Address;
  if (Object.keys(tagged).length > 0) body.TaggedAddresses = tagged;
  if (opts.exposeServers) body.Meta = { [WAN_FEDERATION_META_KEY]: "1" };
  body.Check = {
    Name: `${opts.kind} listening`,
    Interval: "10s",
    TCP: joinHostPort(opts.lan.Address || "127.0.0.1", opts.lan.Port),
    ...(opts.deregisterAfterCritical !== "" ? { DeregisterCriticalServiceAfter: opts.deregisterAfterCritical } : {}),
  };
  body.Checks = null;
  if (config) body.Proxy = { Config: config, MeshGateway: {}, Expose: {} };
  return `${JSON.stringify(body)}\n`;
}

/**
 * Registers the gateway with the local agent (`-register`) and, unless the bootstrap goes to stdout,
 * says so on stdout as Consul does. Throws `Error registering service "<name>": ...` when the agent
 * refuses, and the bind error before anything is sent.
 */
export async function registerGateway(
  client: AgentHttpClient,
  opts: GatewayOptions,
  proxyId: string,
  hostIps: readonly string[],
  io: CommandIo,
  quiet: boolean,
): Promise<void> {
  const body = gatewayRegistrationBody(opts, proxyId, hostIps);
  try {
    await client.request("PUT", "/v1/agent/service/register", { body });
  } catch (err) {
    throw new Error(`Error registering service ${JSON.stringify(opts.service)}: ${(err as Error).message}`);
  }
  if (!quiet) io.out(`Registered service: ${opts.service}\n`);
}
