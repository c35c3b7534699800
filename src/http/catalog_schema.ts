/**
 * The Go shapes of Consul's catalog write bodies (agent/structs RegisterRequest, DeregisterRequest and
 * what they hold, v1.8) for the Go-like decoder, and the raw decoded types they yield. Durations in a
 * check's Definition are Go duration strings or nanosecond numbers (Consul's FixupDurations /
 * HealthCheckDefinition.UnmarshalJSON); fields Causeway does not model are ignored like unknown ones.
 */
import { map, parseGoDuration, slice, struct, type GoType, type JsonValue } from "../lib/index.ts";

/** A time.Duration that also accepts a Go duration string; decodes to nanoseconds. */
export const DURATION: GoType = {
  custom: {
    goName: "time.Duration",
    decode: (v) => (typeof v === "string" ? parseGoDuration(v) : typeof v === "number" ? Math.trunc(v) : undefined),
  },
};

const STRINGS = slice("string");
const STRING_MAP = map("string");
const MESH_GATEWAY = struct("structs.MeshGatewayConfig", { Mode: "string" });

const UPSTREAM = struct("structs.Upstream", {
  DestinationType: "string", DestinationNamespace: "string", DestinationName: "string", Datacenter: "string",
  LocalBindAddress: "string", LocalBindPort: "int", Config: map("any"), MeshGateway: MESH_GATEWAY,
});

const EXPOSE_PATH = struct("structs.ExposePath", {
  ListenerPort: "int", Path: "string", LocalPathPort: "int", Protocol: "string", ParsedFromCheck: "bool",
});

const PROXY = struct("structs.ConnectProxyConfig", {
  DestinationServiceName: "string", DestinationServiceID: "string", LocalServiceAddress: "string", LocalServicePort: "int",
  Config: map("any"), Upstreams: slice(UPSTREAM), MeshGateway: MESH_GATEWAY,
  Expose: struct("structs.ExposeConfig", { Checks: "bool", Paths: slice(EXPOSE_PATH) }),
});

export const NODE_SERVICE = struct("structs.NodeService", {
  Kind: "string", ID: "string", Service: "string", Tags: STRINGS, Address: "string",
  TaggedAddresses: map(struct("structs.ServiceAddress", { Address: "string", Port: "int" })),
  Meta: STRING_MAP, Port: "int", Weights: struct("structs.Weights", { Passing: "int", Warning: "int" }),
  EnableTagOverride: "bool", Proxy: PROXY,
  Connect: struct("structs.ServiceConnect", { Native: "bool", SidecarService: "any" }),
});

export const HEALTH_CHECK = struct("structs.HealthCheck", {
  Node: "string", CheckID: "string", Name: "string", Status: "string", Notes: "string", Output: "string",
  ServiceID: "string", ServiceName: "string", ServiceTags: STRINGS, Type: "string",
  Definition: struct("structs.HealthCheckDefinition", {
    HTTP: "string", TLSSkipVerify: "bool", Header: map(STRINGS), Method: "string", Body: "string", TCP: "string",
    Interval: DURATION, Timeout: DURATION, DeregisterCriticalServiceAfter: DURATION,
  }),
});

export const REGISTER_REQUEST = struct("structs.RegisterRequest", {
  Datacenter: "string", ID: "string", Node: "string", Address: "string", TaggedAddresses: STRING_MAP, NodeMeta: STRING_MAP,
  Service: NODE_SERVICE, Check: HEALTH_CHECK, Checks: slice(HEALTH_CHECK), SkipNodeUpdate: "bool",
}).struct;

export const DEREGISTER_REQUEST = struct("structs.DeregisterRequest", {
  Datacenter: "string", Node: "string", ServiceID: "string", CheckID: "string",
}).struct;

type Nil<T> = T | null | undefined;

export interface RawUpstream {
  DestinationType?: string; DestinationNamespace?: string; DestinationName?: string; Datacenter?: string;
  LocalBindAddress?: string; LocalBindPort?: number; Config?: Nil<Record<string, unknown>>; MeshGateway?: { Mode?: string };
}

export interface RawExposePath {
  ListenerPort?: number; Path?: string; LocalPathPort?: number; Protocol?: string; ParsedFromCheck?: boolean;
}

export interface RawProxy {
  DestinationServiceName?: string; DestinationServiceID?: string; LocalServiceAddress?: string; LocalServicePort?: number;
  Config?: Nil<Record<string, unknown>>; Upstreams?: Nil<RawUpstream[]>; MeshGateway?: { Mode?: string };
  Expose?: { Checks?: boolean; Paths?: Nil<RawExposePath[]> };
}

export interface RawService {
  Kind?: string; ID?: string; Service?: string; Tags?: Nil<string[]>; Address?: string;
  TaggedAddresses?: Nil<Record<string, { Address?: string; Port?: number }>>; Meta?: Nil<Record<string, string>>;
  Port?: number; Weights?: { Passing?: number; Warning?: number }; EnableTagOverride?: boolean; Proxy?: RawProxy;
  Connect?: { Native?: boolean; SidecarService?: JsonValue };
}

export interface RawCheck {
  Node?: string; CheckID?: string; Name?: string; Status?: string; Notes?: string; Output?: string; ServiceID?: string;
  ServiceName?: string; ServiceTags?: Nil<string[]>; Type?: string;
  Definition?: {
    HTTP?: string; TLSSkipVerify?: boolean; Header?: Nil<Record<string, string[] | null>>; Method?: string; Body?: string;
    TCP?: string; Interval?: number; Timeout?: number; DeregisterCriticalServiceAfter?: number;
  };
}

export interface RawRegister {
  Datacenter?: string; ID?: string; Node?: string; Address?: string; TaggedAddresses?: Nil<Record<string, string>>;
  NodeMeta?: Nil<Record<string, string>>; Service?: RawService; Check?: RawCheck; Checks?: Nil<RawCheck[]>; SkipNodeUpdate?: boolean;
}

export interface RawDeregister {
  Datacenter?: string; Node?: string; ServiceID?: string; CheckID?: string;
}
