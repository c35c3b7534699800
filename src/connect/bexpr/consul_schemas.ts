/**
 * Filter schemas for Consul's wire types, matching the selectors Consul 1.8 accepts: the fields of
 * agent/structs (structs.go) minus those tagged `bexpr:"-"` (RaftIndex, EnterpriseMeta, HealthCheck.Definition,
 * the free-form Proxy.Config and Upstream.Config). Cross-checked against the selector tables in Consul's API
 * docs (website/pages/api-docs/health.mdx "Filtering", catalog.mdx) and agent/structs/structs_filtering_test.go.
 */
import type {
  CheckServiceNode,
  ConnectProxyConfig,
  ExposeConfig,
  ExposePath,
  HealthCheck,
  Node,
  NodeService,
  ServiceNode,
  Upstream,
} from "../../model/index.ts";
import { list, map, struct, type Schema, type SchemaOf } from "./schema.ts";

const SERVICE_ADDRESS = struct({ Address: "string", Port: "int" });
const WEIGHTS = struct({ Passing: "int", Warning: "int" });
const MESH_GATEWAY = struct({ Mode: "string" });
const SERVICE_CONNECT = struct({ Native: "bool" });

const UPSTREAM = struct({
  DestinationType: "string",
  DestinationNamespace: "string",
  DestinationName: "string",
  Datacenter: "string",
  LocalBindAddress: "string",
  LocalBindPort: "int",
  MeshGateway: MESH_GATEWAY,
} satisfies SchemaOf<Upstream>);

const EXPOSE_PATH = struct({
  ListenerPort: "int",
  Path: "string",
  LocalPathPort: "int",
  Protocol: "string",
  ParsedFromCheck: "bool",
} satisfies SchemaOf<ExposePath>);

const EXPOSE = struct({ Checks: "bool", Paths: list(EXPOSE_PATH) } satisfies SchemaOf<ExposeConfig>);

const PROXY = struct({
  DestinationServiceName: "string",
  DestinationServiceID: "string",
  LocalServiceAddress: "string",
  LocalServicePort: "int",
  Upstreams: list(UPSTREAM),
  MeshGateway: MESH_GATEWAY,
  Expose: EXPOSE,
} satisfies SchemaOf<ConnectProxyConfig>);

/** A catalog node (`/v1/catalog/nodes`). */
export const NODE_SCHEMA: Schema = {
  ID: "string",
  Node: "string",
  Address: "string",
  Datacenter: "string",
  TaggedAddresses: map("string"),
  Meta: map("string"),
} satisfies SchemaOf<Node>;

/** A service instance (`/v1/agent/services` values, `/v1/catalog/node/:node` Services, CheckServiceNode.Service). */
export const NODE_SERVICE_SCHEMA: Schema = {
  Kind: "string",
  ID: "string",
  Service: "string",
  Tags: list("string"),
  Address: "string",
  TaggedAddresses: map(SERVICE_ADDRESS),
  Meta: map("string"),
  Port: "int",
  Weights: WEIGHTS,
  EnableTagOverride: "bool",
  Proxy: PROXY,
  Connect: SERVICE_CONNECT,
} satisfies SchemaOf<NodeService>;

/** A health check (`/v1/health/node/:node`, `/v1/health/checks/:service`, `/v1/health/state/:state`, agent checks). */
export const HEALTH_CHECK_SCHEMA: Schema = {
  Node: "string",
  CheckID: "string",
  Name: "string",
  Status: "string",
  Notes: "string",
  Output: "string",
  ServiceID: "string",
  ServiceName: "string",
  ServiceTags: list("string"),
  Type: "string",
} satisfies SchemaOf<HealthCheck>;

/** An instance with its node and checks (`/v1/health/service/:service`, service-resolver `Subsets[].Filter`). */
export const CHECK_SERVICE_NODE_SCHEMA: Schema = {
  Node: struct(NODE_SCHEMA),
  Service: struct(NODE_SERVICE_SCHEMA),
  Checks: list(struct(HEALTH_CHECK_SCHEMA)),
} satisfies SchemaOf<CheckServiceNode>;

/** The flattened catalog row (`/v1/catalog/service/:service`, `/v1/catalog/connect/:service`). */
export const SERVICE_NODE_SCHEMA: Schema = {
  ID: "string",
  Node: "string",
  Address: "string",
  Datacenter: "string",
  TaggedAddresses: map("string"),
  NodeMeta: map("string"),
  ServiceKind: "string",
  ServiceID: "string",
  ServiceName: "string",
  ServiceTags: list("string"),
  ServiceAddress: "string",
  ServiceTaggedAddresses: map(SERVICE_ADDRESS),
  ServiceWeights: WEIGHTS,
  ServiceMeta: map("string"),
  ServicePort: "int",
  ServiceEnableTagOverride: "bool",
  ServiceProxy: PROXY,
  ServiceConnect: SERVICE_CONNECT,
} satisfies SchemaOf<ServiceNode>;
