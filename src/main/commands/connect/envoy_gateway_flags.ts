/**
 * The gateway flags of `causeway connect envoy` and the checks Consul 1.8's command/connect/envoy/envoy.go
 * makes on them before it talks to the agent: `-gateway` (or the deprecated `-mesh-gateway`),
 * `-register`, `-service`, `-address`, `-wan-address`, `-bind-address`, `-expose-servers` and
 * `-deregister-after-critical`. Pure: turns parsed flags into GatewayOptions or an error for the user.
 */
import { ownEntry } from "../../../lib/index.ts";
import { UsageError, type FlagSpec, type ParsedFlags } from "../../flags.ts";
import { boolFlag, stringFlag } from "../support/index.ts";
import { DEFAULT_GATEWAY_PORT, parseBindAddress, parseServiceAddress, type ServiceAddress } from "./envoy_gateway_address.ts";

/** The gateway flags, in the order the help lists them. */
export const GATEWAY_FLAGS: readonly FlagSpec[] = [
  {
    name: "gateway",
    kind: "string",
    arg: "<kind>",
    usage: 'The type of gateway to register. Causeway supports "mesh"; Consul\'s "terminating" and "ingress" are refused.',
  },
  { name: "mesh-gateway", kind: "bool", usage: "Configure Envoy as a Mesh Gateway. Deprecated: use -gateway=mesh." },
  { name: "register", kind: "bool", usage: "Register a new gateway service before configuring and starting Envoy." },
  { name: "service", kind: "string", arg: "<name>", usage: 'Service name to use for the registration. Default "mesh-gateway".' },
  {
    name: "address",
    kind: "string",
    arg: "<ip:port>",
    usage: `LAN address to advertise in the gateway service registration. Default: no address (the agent's own) and port ${DEFAULT_GATEWAY_PORT}.`,
  },
  { name: "wan-address", kind: "string", arg: "<ip:port>", usage: "WAN address to advertise in the gateway service registration. Default: none (the agent's WAN address)." },
  {
    name: "bind-address",
    kind: "strings",
    arg: "<name=ip:port>",
    usage: "Bind address to use instead of the default binding rules given as `<name>=<ip>:<port>` pairs.",
  },
  { name: "expose-servers", kind: "bool", usage: "Expose the servers for WAN federation via this mesh gateway." },
  {
    name: "deregister-after-critical",
    kind: "string",
    arg: "<duration>",
    usage: 'The amount of time the gateway services health check can be failing before being deregistered. Default "6h".',
  },
];

/** Consul 1.8's supportedGateways; only the mesh kind is built here. */
const GATEWAY_KINDS: Readonly<Record<string, string>> = { mesh: "mesh-gateway", terminating: "terminating-gateway", ingress: "ingress-gateway" };

/** What the gateway flags ask for, checked and with Consul's defaults filled in. */
export interface GatewayOptions {
  /** The service kind (`mesh-gateway`). */
  readonly kind: "mesh-gateway";
  /** `-service`, else the kind: the registration's name and Envoy's node cluster. */
  readonly service: string;
  readonly register: boolean;
  /**
   * `-expose-servers` (only with a mesh gateway and `-register`): the registration carries Meta
   * `consul-wan-federation` = "1", so the gateway also routes server traffic for WAN federation.
   */
  readonly exposeServers: boolean;
  /** `-address`; Address "" and port 8443 when not given (Consul's ServiceAddressValue.Value). */
  readonly lan: ServiceAddress;
  /** `-wan-address`, defaulted as `lan` is. */
  readonly wan: ServiceAddress;
  /** `-bind-address` values by name, sorted by name; a repeated name keeps its last value. */
  readonly bindAddresses: ReadonlyArray<readonly [string, ServiceAddress]>;
  /** `-deregister-after-critical`, passed to the agent as given (default "6h"). */
  readonly deregisterAfterCritical: string;
}

/** An address flag's value, or the default; throws Go's flag error text as a UsageError. */
function addressFlag(parsed: ParsedFlags, name: string): ServiceAddress {
  const raw = stringFlag(parsed, name);
  if (raw === undefined) return { Address: "", Port: DEFAULT_GATEWAY_PORT };
  try {
    const a = parseServiceAddress(raw);
    // Consul's ServiceAddressValue.Value: an empty value (":0") means the default.
    return a.Address === "" && a.Port === 0 ? { Address: "", Port: DEFAULT_GATEWAY_PORT } : a;
  } catch (err) {
    throw new UsageError(`invalid value ${JSON.stringify(raw)} for flag -${name}: ${(err as Error).message}`);
  }
}

/** The `-bind-address` values, sorted by name; throws Go's flag error text as a UsageError. */
function bindAddressFlags(parsed: ParsedFlags): Array<[string, ServiceAddress]> {
  const raw = parsed.values.get("bind-address");
  const byName = new Map<string, ServiceAddress>();
  for (const item of Array.isArray(raw) ? raw : []) {
    try {
      const { name, address } = parseBindAddress(item);
      byName.set(name, address);
    } catch (err) {
      throw new UsageError(`invalid value ${JSON.stringify(item)} for flag -bind-address: ${(err as Error).message}`);
    }
  }
  return [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Checks the gateway flags as Consul 1.8 does, in its order, and returns the options (undefined when no
 * gateway was asked for). The address flags are parsed first, as Go's flag package does, and throw a
 * UsageError (`invalid value "<v>" for flag -address: ...`). Then, as plain Errors with Consul's text:
 * `-mesh-gateway` with `-gateway`, `-expose-servers` without a mesh gateway or without `-register`, an
 * unknown `-gateway` kind, `-register` without a gateway. Causeway's own refusals: the terminating and
 * ingress kinds (only "mesh" is built) and `-sidecar-for` with a gateway (Consul would let the sidecar
 * lookup win and, with `-register`, overwrite that sidecar's registration with a gateway). `sidecarFor` is `-sidecar-for`
 * or CONNECT_SIDECAR_FOR. `impliedGateway` stands for a `-gateway` the command itself implies
 * (`causeway gateway mesh`, which has no -gateway flag).
 */
export function gatewayOptions(parsed: ParsedFlags, sidecarFor: string, impliedGateway?: "mesh"): GatewayOptions | undefined {
  const lan = addressFlag(parsed, "address");
  const wan = addressFlag(parsed, "wan-address");
  const bindAddresses = bindAddressFlags(parsed);

  let gateway = impliedGateway ?? stringFlag(parsed, "gateway") ?? "";
  const register = boolFlag(parsed, "register");
  if (boolFlag(parsed, "mesh-gateway")) {
    if (gateway !== "") throw new Error("The mesh-gateway flag is deprecated and cannot be used alongside the gateway flag");
    gateway = "mesh";
  }
  const exposeServers = boolFlag(parsed, "expose-servers");
  if (exposeServers) {
    if (gateway !== "mesh") throw new Error("'-expose-servers' can only be used for mesh gateways");
    if (!register) throw new Error("'-expose-servers' requires '-register'");
  }
  if (gateway === "") {
    if (register) throw new Error("Auto-Registration can only be used for gateways");
    return undefined;
  }
  const kind = ownEntry(GATEWAY_KINDS, gateway);
  if (kind === undefined) throw new Error("Gateway must be one of: terminating, mesh, or ingress");
  if (kind !== "mesh-gateway") throw new Error(`-gateway=${gateway} is not supported: Causeway only supports -gateway=mesh (mesh gateways)`);
  if (sidecarFor !== "") throw new Error("-sidecar-for (or CONNECT_SIDECAR_FOR) cannot be used with -gateway: a gateway is not a sidecar; use -proxy-id to name the gateway's service ID");
  return {
    kind,
    service: stringFlag(parsed, "service") || kind,
    register,
    exposeServers,
    lan,
    wan,
    bindAddresses,
    deregisterAfterCritical: stringFlag(parsed, "deregister-after-critical") ?? "6h",
  };
}
