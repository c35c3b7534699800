/**
 * Escape hatches: a whole Listener or Cluster given as proto3 JSON in a proxy's or upstream's opaque
 * config (`envoy_public_listener_json`, `envoy_listener_json`, `envoy_local_cluster_json`,
 * `envoy_cluster_json`). Like Consul's makeListenerFromUserConfig / makeClusterFromUserConfig, the JSON may
 * be the message itself or an Any with `@type`. Decoding is strict: unknown fields and unknown `@type`s
 * are errors. Only Envoy v3 types are accepted (Consul 1.8 also took v2 JSON; Causeway serves v3 only).
 */
import { fromJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { anyUnpack, AnySchema } from "@bufbuild/protobuf/wkt";
import { ClusterSchema, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ListenerSchema, type Listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { ResourceGenerationError } from "./common.ts";
import { envoyRegistry } from "./registry.ts";

function decode<D extends DescMessage>(schema: D, key: string, text: string): MessageShape<D> {
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch (e) {
    throw new ResourceGenerationError(`${key}: invalid JSON: ${(e as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ResourceGenerationError(`${key}: expected a JSON object`);
  }
  try {
    if ("@type" in json) {
      const want = `type.googleapis.com/${schema.typeName}`;
      if (json["@type"] !== want) throw new Error(`"@type" must be "${want}", got ${JSON.stringify(json["@type"])}`);
      const any = fromJson(AnySchema, json, { registry: envoyRegistry });
      const msg = anyUnpack(any, schema);
      if (!msg) throw new Error(`could not unpack ${want}`);
      return msg;
    }
    return fromJson(schema, json, { registry: envoyRegistry });
  } catch (e) {
    if (e instanceof ResourceGenerationError) throw e;
    throw new ResourceGenerationError(`${key}: ${(e as Error).message}`);
  }
}

/** Decodes a Listener escape hatch; throws ResourceGenerationError naming `key` when it is not one. */
export function listenerFromUserConfig(key: string, text: string): Listener {
  return decode(ListenerSchema, key, text);
}

/** Decodes a Cluster escape hatch; throws ResourceGenerationError naming `key` when it is not one. */
export function clusterFromUserConfig(key: string, text: string): Cluster {
  return decode(ClusterSchema, key, text);
}
