/**
 * Whether a verified client certificate is a server's: with verify_server_hostname, connections only
 * servers may open (WAN gossip through mesh gateways) must present one. The rule is Consul's
 * `tlsutil.AuthorizeServerConn`: the certificate names `server.<dc>.<domain>` (a DNS SAN; the subject
 * CN is not consulted, as Go's x509 no longer does). A WAN peer is a server of another datacenter, so
 * any datacenter's name is a server's.
 */
import type * as tls from "node:tls";

/**
 * The DNS names of a peer certificate as node:tls reports them in `subjectaltname`
 * ("DNS:a, DNS:b, IP Address:127.0.0.1"; a value with special characters comes JSON-quoted).
 */
export function certificateDnsNames(cert: tls.PeerCertificate | undefined): string[] {
  const san = cert?.subjectaltname;
  if (!san) return [];
  const out: string[] = [];
  for (const entry of san.split(", ")) {
    if (!entry.startsWith("DNS:")) continue;
    const value = entry.slice(4);
    if (!value.startsWith('"')) out.push(value);
    else {
      try {
        out.push(String(JSON.parse(value)));
      } catch {
        // A quoted value split at an inner ", " is not a server name either way.
      }
    }
  }
  return out;
}

/**
 * Whether the certificate names a server of `datacenter` (`server.<dc>.<domain>`, or a wildcard `*.<dc>.<domain>`
 * covering it, as Go's x509 hostname check accepts), looking at every DNS name, case-insensitively. Consul's
 * AuthorizeServerConn for Raft asks exactly this of the local datacenter.
 */
export function certificateNamesServerOf(cert: tls.PeerCertificate | undefined, datacenter: string, domain: string): boolean {
  const suffix = `${datacenter}.${(domain.endsWith(".") ? domain.slice(0, -1) : domain)}`.toLowerCase();
  return certificateDnsNames(cert).some((raw) => {
    const name = raw.toLowerCase();
    return name === `server.${suffix}` || name === `*.${suffix}`;
  });
}

/**
 * The datacenter of the first server the certificate names (`server.<dc>.<domain>`, or a wildcard
 * `*.<dc>.<domain>` covering it; compared case-insensitively; one trailing dot of `domain` ignored), or
 * undefined when it names no server. Whether it names a server of one given datacenter (a certificate may
 * name several): certificateNamesServerOf.
 */
export function serverCertificateDatacenter(cert: tls.PeerCertificate | undefined, domain: string): string | undefined {
  const suffix = `.${(domain.endsWith(".") ? domain.slice(0, -1) : domain).toLowerCase()}`;
  for (const raw of certificateDnsNames(cert)) {
    const name = raw.toLowerCase();
    const prefix = name.startsWith("server.") ? "server." : name.startsWith("*.") ? "*." : undefined;
    if (prefix === undefined || !name.endsWith(suffix)) continue;
    const dc = name.slice(prefix.length, name.length - suffix.length);
    if (dc !== "" && !dc.includes(".") && !dc.includes("*")) return dc;
  }
  return undefined;
}
