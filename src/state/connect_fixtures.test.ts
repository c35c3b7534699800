/** Shared Connect values for the state store tests (no tests here). */
import type { CAConfiguration, CARoot, ConfigEntry, Intention } from "../model/index.ts";
import type { StateCommand } from "./commands.ts";

export function serviceDefaults(name: string, protocol = "http"): ConfigEntry {
  return { Kind: "service-defaults", Name: name, Protocol: protocol, MeshGateway: {}, Expose: {}, CreateIndex: 0, ModifyIndex: 0 };
}

export function resolver(name: string, more: Partial<Extract<ConfigEntry, { Kind: "service-resolver" }>> = {}): ConfigEntry {
  return { Kind: "service-resolver", Name: name, ConnectTimeout: "5s", CreateIndex: 0, ModifyIndex: 0, ...more };
}

export function intention(id: string, src: string, dst: string, more: Partial<Intention> = {}): Intention {
  const prec = (ns: string, n: string) => (ns === "*" ? 0 : n === "*" ? 1 : 2);
  const Precedence = [3, 6, 9][prec("default", dst)]! - (2 - prec("default", src));
  return {
    ID: id, Description: "", SourceNS: "default", SourceName: src, DestinationNS: "default", DestinationName: dst,
    SourceType: "consul", Action: "allow", DefaultAddr: "", DefaultPort: 0, Meta: {}, Precedence,
    CreatedAt: "2020-01-01T00:00:00Z", UpdatedAt: "2020-01-01T00:00:00Z", Hash: "h", CreateIndex: 0, ModifyIndex: 0, ...more,
  };
}

export function root(id: string, active: boolean): CARoot {
  return {
    ID: id, Name: "Consul CA Root Cert", SerialNumber: 7, SigningKeyID: "aa:bb", ExternalTrustDomain: "c1",
    NotBefore: "2020-01-01T00:00:00Z", NotAfter: "2030-01-01T00:00:00Z", RootCert: `PEM ${id}`, IntermediateCerts: [],
    Active: active, PrivateKeyType: "ec", PrivateKeyBits: 256, CreateIndex: 0, ModifyIndex: 0,
  };
}

export function caConfig(clusterId = "11111111-2222-3333-4444-555555555555", privateKey?: string): CAConfiguration {
  return {
    ClusterID: clusterId, Provider: "consul", CreateIndex: 0, ModifyIndex: 0,
    Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", ...(privateKey ? { PrivateKey: privateKey } : {}) },
  };
}

export const setEntry = (entry: ConfigEntry): StateCommand => ({ type: "config-entry", op: "set", entry });
export const upsert = (x: Intention): StateCommand => ({ type: "intention", op: "upsert", intention: x });
export const setRoots = (roots: readonly CARoot[], index: number, config?: CAConfiguration): StateCommand =>
  config ? { type: "ca", op: "set-roots", roots, index, config } : { type: "ca", op: "set-roots", roots, index };
