/**
 * Loads the agent's TLS files at start-up and refuses to start, with a message naming the file and the
 * problem, when they are missing, unreadable, do not parse, do not belong together, or (for a server)
 * do not name `server.<dc>.<domain>`, and, with WAN federation through mesh gateways, also
 * `<node>.server.<dc>.<domain>` or `*.server.<dc>.<domain>`: gateways route server traffic by that
 * name and the dialling server verifies it (Consul's wrapALPNTLSClient; PR #9838).
 */
import { readFileSync } from "node:fs";
import { serverSni } from "../federation/index.ts";
import { certificateMatchesKey, parseCertificate, parseCertificates } from "../lib/index.ts";
import type { TlsMaterial } from "../platform/index.ts";
import { ConfigError, type RuntimeConfig } from "./config.ts";

export interface LoadedTls {
  readonly material: TlsMaterial;
  readonly verifyIncomingRpc: boolean;
  readonly verifyOutgoing: boolean;
  readonly verifyServerHostname: boolean;
}

function read(setting: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`${setting} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Undefined when no certificate is configured (plaintext server port). */
export async function loadTlsFiles(config: RuntimeConfig): Promise<LoadedTls | undefined> {
  const t = config.tls;
  if (!t.certFile) return undefined;
  if (!t.caFile) throw new ConfigError("cert_file requires ca_file (the CA that peers' certificates must chain to)");
  const ca = read("ca_file", t.caFile);
  const cert = read("cert_file", t.certFile);
  const key = read("key_file", t.keyFile);
  try {
    if (parseCertificates(ca).length === 0) throw new Error("no certificate in it");
  } catch (err) {
    throw new ConfigError(`ca_file ${t.caFile} is not a PEM certificate bundle: ${(err as Error).message}`);
  }
  let names: readonly string[];
  try {
    names = parseCertificate(cert).dnsNames;
  } catch (err) {
    throw new ConfigError(`cert_file ${t.certFile} is not a PEM certificate: ${(err as Error).message}`);
  }
  let matches: boolean;
  try {
    matches = await certificateMatchesKey(cert, key);
  } catch (err) {
    throw new ConfigError(`key_file ${t.keyFile} is not a PEM private key: ${(err as Error).message}`);
  }
  if (!matches) throw new ConfigError(`key_file ${t.keyFile} is not the private key of cert_file ${t.certFile}`);
  const named = names.join(", ") || "no DNS names";
  if (config.server) {
    const want = serverSni(config.datacenter, "", config.domain);
    if (!names.includes(want)) throw new ConfigError(`cert_file ${t.certFile} must name ${want} to serve as a server certificate (it names ${named})`);
  }
  if (config.server && config.federation.meshGatewayWanFederation) {
    const own = serverSni(config.datacenter, config.nodeName, config.domain);
    const wildcard = `*.${serverSni(config.datacenter, "", config.domain)}`;
    if (!names.includes(own) && !names.includes(wildcard)) {
      throw new ConfigError(
        `cert_file ${t.certFile} must name ${own} (or ${wildcard}) for 'connect.enable_mesh_gateway_wan_federation = true': ` +
          `mesh gateways route server traffic by that name (it names ${named})`,
      );
    }
  }
  return {
    material: { ca, cert, key },
    verifyIncomingRpc: t.verifyIncomingRpc || t.verifyIncoming,
    verifyOutgoing: t.verifyOutgoing,
    verifyServerHostname: t.verifyServerHostname,
  };
}
