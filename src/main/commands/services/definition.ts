/**
 * Service definitions from files, as `consul services register FILE` reads them (command/services/config.go
 * in hashicorp/consul): an agent config file's `service` block (one object) or `services` block (an array),
 * turned into the PascalCase body of PUT /v1/agent/service/register (the Go API's
 * `AgentServiceRegistration`). JSON only; keys may be snake_case as in config files (`enable_tag_override`,
 * `check: {http, interval}`) or already PascalCase. User-keyed maps (`meta`, proxy `config`, check `header`)
 * keep their keys; `tagged_addresses` keeps its keys and converts its `{address, port}` values.
 */
import { readFile } from "node:fs/promises";
import { ownEntry } from "../../../lib/index.ts";

/** A registration body: PascalCase keys as the agent API takes them. */
export type ServiceRegistration = Record<string, unknown>;

/** Word parts written in capitals in Go field names (`grpc_use_tls` -> `GRPCUseTLS`). */
const INITIALISMS: Readonly<Record<string, string>> = { id: "ID", http: "HTTP", tcp: "TCP", udp: "UDP", ttl: "TTL", grpc: "GRPC", tls: "TLS", ip: "IP", dns: "DNS", sni: "SNI", h2ping: "H2PING" };

/** Fields whose values are user-keyed maps copied as they are. */
const OPAQUE = new Set(["Meta", "NodeMeta", "Config", "Header", "EnvoyExtensions"]);

/** Config-file names that are not a plain case change of the API field (per context). */
const RENAMES: Readonly<Record<"service" | "check" | "other", Readonly<Record<string, string>>>> = {
  service: {},
  check: { ID: "CheckID", Args: "ScriptArgs" },
  other: {},
};

/** `enable_tag_override` -> `EnableTagOverride`; `tlsSkipVerify` -> `TlsSkipVerify`; `Name` stays. */
function pascal(key: string): string {
  return key
    .split("_")
    .map((part) => ownEntry(INITIALISMS, part) ?? part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

type Context = "service" | "check" | "other";

/** The context of a field's value, from the (PascalCase) field name. */
function childContext(field: string): Context {
  if (field === "Check" || field === "Checks") return "check";
  if (field === "SidecarService") return "service";
  return "other";
}

function translate(value: unknown, context: Context): unknown {
  if (Array.isArray(value)) return value.map((v) => translate(v, context));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const name = RENAMES[context][pascal(key)] ?? pascal(key);
    if (OPAQUE.has(name)) out[name] = v;
    else if (name === "TaggedAddresses" && v !== null && typeof v === "object" && !Array.isArray(v)) {
      out[name] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, addr]) => [k, translate(addr, "other")]));
    } else out[name] = translate(v, childContext(name));
  }
  return out;
}

/**
 * The service registrations in a config document: `service` (an object, or an array) then `services`.
 * Throws when the document is not an object or has neither block.
 */
export function servicesFromDocument(doc: unknown, source: string): ServiceRegistration[] {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new Error(`${source}: a service definition file must hold a JSON object`);
  const blocks: unknown[] = [];
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key.toLowerCase() === "service" || key.toLowerCase() === "services") blocks.push(...(Array.isArray(value) ? value : [value]));
  }
  if (blocks.length === 0) throw new Error(`${source}: no "service" or "services" block`);
  return blocks.map((block, i) => {
    if (block === null || typeof block !== "object" || Array.isArray(block)) throw new Error(`${source}: service definition ${i + 1} is not an object`);
    return translate(block, "service") as ServiceRegistration;
  });
}

/** Reads each file (JSON) and collects its service definitions, in order. Errors name the file. */
export async function servicesFromFiles(paths: readonly string[]): Promise<ServiceRegistration[]> {
  const out: ServiceRegistration[] = [];
  for (const path of paths) {
    if (/\.hcl$/i.test(path)) throw new Error(`${path}: HCL service definitions are not supported; use JSON`);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      throw new Error(`Error reading "${path}": ${(err as Error).message}`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new Error(`Error parsing ${path}: ${(err as Error).message}`);
    }
    out.push(...servicesFromDocument(doc, path));
  }
  return out;
}
