/**
 * Names used by discovery chains: agent/connect/sni.go (ServiceSNI) and structs.DiscoveryTarget's ID format
 * (1.6-1.8, before partitions).
 */

/** `<svc>.<ns>.<dc>.internal.<trustDomain>`, or with a subset `<subset>.<svc>.<ns>.<dc>.internal.<trustDomain>`. */
export function serviceSni(service: string, subset: string, namespace: string, datacenter: string, trustDomain: string): string {
  const ns = namespace === "" ? "default" : namespace;
  return subset === "" ? `${service}.${ns}.${datacenter}.internal.${trustDomain}` : `${subset}.${service}.${ns}.${datacenter}.internal.${trustDomain}`;
}

/** `<svc>.<ns>.<dc>` or `<subset>.<svc>.<ns>.<dc>`. */
export function targetId(service: string, subset: string, namespace: string, datacenter: string): string {
  return subset === "" ? `${service}.${namespace}.${datacenter}` : `${subset}.${service}.${namespace}.${datacenter}`;
}

/** Graph node key: `<type>:<name>`. */
export function nodeKey(type: string, name: string): string {
  return `${type}:${name}`;
}
