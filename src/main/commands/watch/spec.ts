/**
 * What `causeway watch` watches: Consul's watch.Parse and its per-type factories (api/watch/watch.go and
 * funcs.go in hashicorp/consul, v1.8) over the parameters the CLI collects from its flags. Pure: the
 * parameters in, a typed watch spec or Consul's error text out.
 */

/** A watch the CLI can run, with the parameters its request needs. */
export type WatchSpec =
  | { readonly type: "key"; readonly key: string; readonly stale: boolean }
  | { readonly type: "keyprefix"; readonly prefix: string; readonly stale: boolean }
  | { readonly type: "services"; readonly stale: boolean }
  | { readonly type: "nodes"; readonly stale: boolean }
  | { readonly type: "service"; readonly service: string; readonly tags: readonly string[]; readonly passingOnly: boolean; readonly stale: boolean }
  /** `state` set: GET /v1/health/state/<state>; else GET /v1/health/checks/<service>. */
  | { readonly type: "checks"; readonly service: string; readonly state: string; readonly stale: boolean }
  | { readonly type: "event"; readonly name: string };

/**
 * The CLI's watch parameters (the `params` map of Consul's command/watch): a string parameter only when
 * its flag was given non-empty, `tag` only when at least one was given, `stale` and `passingonly` only
 * when given (`stale` only when true), as Consul fills them.
 */
export interface WatchParams {
  readonly type: string;
  readonly key?: string;
  readonly prefix?: string;
  readonly service?: string;
  readonly tag?: readonly string[];
  readonly stale?: boolean;
  readonly state?: string;
  readonly name?: string;
  readonly passingonly?: boolean;
}

/** The types of Consul 1.8's watch factory; the last three parse but the CLI refuses them. */
export const WATCH_TYPES = ["key", "keyprefix", "services", "nodes", "service", "checks", "event", "connect_roots", "connect_leaf", "agent_service"] as const;

/**
 * Consul's `watch.Parse` followed by the CLI's refusal of `connect_*` and `agent_*` types. Each factory
 * consumes the parameters it knows and checks its required one first; any parameter left over is
 * `Invalid parameters: [a b]` (Go prints its map keys in random order; here they are sorted).
 */
export function parseWatchSpec(params: WatchParams): WatchSpec | { readonly error: string } {
  const left = new Map<string, unknown>(Object.entries(params).filter(([k, v]) => k !== "type" && v !== undefined));
  const take = <T>(name: string): T | undefined => {
    const v = left.get(name) as T | undefined;
    left.delete(name);
    return v;
  };
  const type = params.type;
  if (type === "") return { error: "Watch type must be specified" };
  let spec: WatchSpec | undefined;
  switch (type) {
    case "key":
    case "keyprefix": {
      const stale = take<boolean>("stale") ?? false;
      const param = type === "key" ? "key" : "prefix";
      const value = take<string>(param) ?? "";
      if (value === "") return { error: `Must specify a single ${param} to watch` };
      spec = type === "key" ? { type, key: value, stale } : { type, prefix: value, stale };
      break;
    }
    case "services":
    case "nodes":
      spec = { type, stale: take<boolean>("stale") ?? false };
      break;
    case "service": {
      const stale = take<boolean>("stale") ?? false;
      const service = take<string>("service") ?? "";
      if (service === "") return { error: "Must specify a single service to watch" };
      const tags = take<readonly string[]>("tag") ?? [];
      spec = { type, service, tags, passingOnly: take<boolean>("passingonly") ?? false, stale };
      break;
    }
    case "checks": {
      const stale = take<boolean>("stale") ?? false;
      const service = take<string>("service") ?? "";
      let state = take<string>("state") ?? "";
      if (service !== "" && state !== "") return { error: "Cannot specify service and state" };
      if (service === "" && state === "") state = "any";
      spec = { type, service, state, stale };
      break;
    }
    case "event":
      // The stale setting does not apply to events: `-stale` is left over, an invalid parameter.
      spec = { type, name: take<string>("name") ?? "" };
      break;
    case "connect_roots":
      break;
    case "connect_leaf":
      take("service");
      break;
    case "agent_service":
      take("service_id");
      break;
    default:
      return { error: `Unsupported watch type: ${type}` };
  }
  if (left.size > 0) return { error: `Invalid parameters: [${[...left.keys()].sort().join(" ")}]` };
  if (!spec) return { error: `Type ${type} is not supported in the CLI tool` };
  return spec;
}
