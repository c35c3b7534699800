/**
 * The address settings after go-sockaddr template evaluation, as Consul 1.8's config builder makes them
 * (agent/config/builder.go: expandAddrs, expandFirstIP, expandIPs, expandAllOptionalAddrs and the DNS
 * recursor loop): `bind_addr` (one IP), `advertise_addr` and `advertise_addr_wan` (at most one IP, not
 * 0.0.0.0 or ::), `client_addr` (IPs; Causeway listens on one), `start_join`, `retry_join`,
 * `retry_join_wan`, `primary_gateways` (each entry a template or passed through as written, a template
 * giving a space-separated list) and `recursors` (the same, de-duplicated). Flags feed the same settings.
 *
 * Where Causeway is stricter than Consul, in order to say what went wrong where Consul goes on with
 * something else: a template that gives nothing is an error naming the setting and the template
 * (Consul drops an empty retry_join entry and falls back from an empty advertise_addr to the bind
 * address), and so is a client_addr holding several addresses. Pure: the host's interfaces come from
 * `readHost`, called at most once and only when a value holds a template.
 */
import { emptyTemplateHint, evaluateSockaddrTemplate, parseIp, SockaddrTemplateError, type SockaddrHost } from "../lib/index.ts";
import type { RuntimeConfig } from "./config.ts";
import { ConfigError } from "./config_file.ts";

/** Reads the host's interfaces and default route (src/platform's readHostNetwork in the agent). */
export type HostReader = () => SockaddrHost;

const isTemplate = (v: string) => v.includes("{{");
const quoted = (v: string) => JSON.stringify(v);

function expander(readHost: HostReader | undefined): (setting: string, value: string) => string {
  let host: SockaddrHost | undefined;
  return (setting, value) => {
    if (!isTemplate(value)) return value;
    if (!readHost) throw new ConfigError(`${setting}: ${quoted(value)} is a go-sockaddr template and no view of the host's interfaces was given to evaluate it`);
    try {
      host ??= readHost();
    } catch (err) {
      throw new ConfigError(`${setting}: cannot evaluate ${quoted(value)}: reading the host's network interfaces failed: ${(err as Error).message}`);
    }
    try {
      return evaluateSockaddrTemplate(value, host);
    } catch (err) {
      if (err instanceof SockaddrTemplateError) throw new ConfigError(`${setting}: error parsing ${quoted(value)}: ${err.message}`);
      throw err;
    }
  };
}

const fields = (s: string) => s.split(/\s+/).filter((x) => x !== "");

/**
 * Evaluates the templates in the address settings of a merged config and checks the results; throws
 * ConfigError naming the setting (and the template) for the first problem.
 */
export function resolveAddressSettings(cfg: RuntimeConfig, readHost?: HostReader): RuntimeConfig {
  const expand = expander(readHost);

  /** Consul's expandAddrs + expandIPs: the IPs a value stands for ("[::]" is "::"; unix sockets refused). */
  const ips = (setting: string, value: string): string[] =>
    fields(expand(setting, value)).map((a) => {
      if (a.startsWith("unix://")) throw new ConfigError(`${setting} cannot be a unix socket`);
      const ip = a === "[::]" ? "::" : a;
      try {
        parseIp(ip);
      } catch {
        throw new ConfigError(`${setting}: invalid ip address: ${a}${isTemplate(value) ? ` (from ${quoted(value)})` : ""}`);
      }
      return ip;
    });

  /** At most one IP ("" when the value is empty); a template that gives none, or several, is an error. */
  const single = (setting: string, value: string, several: string): string => {
    const list = ips(setting, value);
    if (list.length === 0 && isTemplate(value)) throw new ConfigError(`${setting}: ${quoted(value)} gave no address${emptyTemplateHint(value)}`);
    if (list.length > 1) throw new ConfigError(`${setting}: ${quoted(value)} ${isTemplate(value) ? "gave" : "holds"} ${list.length} addresses (${list.join(" ")}); ${several}`);
    return list[0] ?? "";
  };
  const takesOne = (setting: string) => `${setting} takes one: narrow the template (for example with | limit 1) or name the address`;

  /** Consul's expandAllOptionalAddrs: a template entry becomes the words it gives, others stay as written. */
  const entries = (setting: string, list: readonly string[]): string[] =>
    list.flatMap((value) => {
      if (!isTemplate(value)) return [value];
      const out = fields(expand(setting, value));
      if (out.length === 0) throw new ConfigError(`${setting}: ${quoted(value)} gave no address${emptyTemplateHint(value)}`);
      return out;
    });

  const bindAddr = single("bind_addr", cfg.bindAddr, `bind_addr cannot contain multiple addresses; ${takesOne("it")}`);
  if (bindAddr === "") throw new ConfigError("bind_addr cannot be empty");
  const advertiseAddr = single("advertise_addr", cfg.advertiseAddr, takesOne("advertise_addr"));
  const advertiseAddrWan = single("advertise_addr_wan", cfg.gossip.advertiseAddrWan, takesOne("advertise_addr_wan"));
  for (const [setting, v] of [["advertise_addr", advertiseAddr], ["advertise_addr_wan", advertiseAddrWan]] as const) {
    if (v === "0.0.0.0" || v === "::") throw new ConfigError(`${setting} cannot be 0.0.0.0, :: or [::]: it must be an address other agents can reach`);
  }
  const clientAddr = single("client_addr", cfg.clientAddr, "Causeway's HTTP, gRPC and DNS listeners take one client address: narrow it to one");

  const recursors: string[] = [];
  for (const r of entries("recursors", cfg.dns.recursors)) {
    if (r.startsWith("unix://")) throw new ConfigError(`DNS Recursors cannot be unix sockets: ${r}`);
    if (!recursors.includes(r)) recursors.push(r);
  }

  return {
    ...cfg,
    bindAddr,
    advertiseAddr,
    clientAddr,
    gossip: {
      ...cfg.gossip,
      advertiseAddrWan,
      startJoin: entries("start_join", cfg.gossip.startJoin),
      retryJoin: entries("retry_join", cfg.gossip.retryJoin),
      retryJoinWan: entries("retry_join_wan", cfg.gossip.retryJoinWan),
    },
    federation: { ...cfg.federation, primaryGateways: entries("primary_gateways", cfg.federation.primaryGateways) },
    dns: { ...cfg.dns, recursors },
  };
}
