/**
 * Test PKI generated with the `openssl` CLI (ECDSA P-256), for TLS/mTLS tests on Bun and Deno.
 *
 * One shell script runs every openssl step in a fresh temp dir (removed afterwards), so the whole
 * PKI costs one process spawn. The result is cached per process: every caller shares the same PEMs.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A certificate and its private key, PEM-encoded. */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

/** The test PKI. `ca`/`rogueCa` certs are the trust anchors; leaves are signed by the named CA. */
export interface TestPki {
  /** The trusted CA (CN "Causeway Test CA"). */
  readonly ca: PemPair;
  /** A second, untrusted CA with the same shape, for negative tests. */
  readonly rogueCa: PemPair;
  /** Signed by `ca`; SANs DNS:server.dc1.consul, DNS:*.server.dc1.consul, DNS:localhost, IP:127.0.0.1; EKU serverAuth+clientAuth. */
  readonly server: PemPair;
  /** Like `server` for datacenter dc2. */
  readonly serverDc2: PemPair;
  /** Like `server` for datacenter dc3. */
  readonly serverDc3: PemPair;
  /** Signed by `ca`; CN client.dc1.consul; EKU clientAuth. */
  readonly client: PemPair;
  /** Signed by `rogueCa`; CN client.dc1.consul; EKU clientAuth. */
  readonly rogueClient: PemPair;
}

const SCRIPT = `
set -e
EC="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
CAEXT="-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
openssl req -x509 $EC -keyout ca.key -out ca.crt -days 3650 -subj "/CN=Causeway Test CA" $CAEXT 2>/dev/null
openssl req -x509 $EC -keyout rogue.key -out rogue.crt -days 3650 -subj "/CN=Causeway Test CA" $CAEXT 2>/dev/null
LEAF="-addext basicConstraints=critical,CA:FALSE -addext keyUsage=critical,digitalSignature"
openssl req -x509 $EC -CA ca.crt -CAkey ca.key -keyout server.key -out server.crt -days 365 \\
  -subj "/CN=server.dc1.consul" $LEAF -addext extendedKeyUsage=serverAuth,clientAuth \\
  -addext "subjectAltName=DNS:server.dc1.consul,DNS:*.server.dc1.consul,DNS:localhost,IP:127.0.0.1" 2>/dev/null
openssl req -x509 $EC -CA ca.crt -CAkey ca.key -keyout serverdc2.key -out serverdc2.crt -days 365 \\
  -subj "/CN=server.dc2.consul" $LEAF -addext extendedKeyUsage=serverAuth,clientAuth \\
  -addext "subjectAltName=DNS:server.dc2.consul,DNS:*.server.dc2.consul,DNS:localhost,IP:127.0.0.1" 2>/dev/null
openssl req -x509 $EC -CA ca.crt -CAkey ca.key -keyout serverdc3.key -out serverdc3.crt -days 365 \\
  -subj "/CN=server.dc3.consul" $LEAF -addext extendedKeyUsage=serverAuth,clientAuth \\
  -addext "subjectAltName=DNS:server.dc3.consul,DNS:*.server.dc3.consul,DNS:localhost,IP:127.0.0.1" 2>/dev/null
openssl req -x509 $EC -CA ca.crt -CAkey ca.key -keyout client.key -out client.crt -days 365 \\
  -subj "/CN=client.dc1.consul" $LEAF -addext extendedKeyUsage=clientAuth 2>/dev/null
openssl req -x509 $EC -CA rogue.crt -CAkey rogue.key -keyout rogueclient.key -out rogueclient.crt -days 365 \\
  -subj "/CN=client.dc1.consul" $LEAF -addext extendedKeyUsage=clientAuth 2>/dev/null
`;

let cached: TestPki | undefined;

/**
 * Returns the test PKI, generating it on first call (synchronously, ~100 ms). Throws if openssl
 * (looked up as /usr/bin/openssl, then PATH) fails.
 */
export function testPki(): TestPki {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "causeway-pki-"));
  try {
    execFileSync("/bin/sh", ["-c", SCRIPT], {
      cwd: dir,
      env: { PATH: `/usr/bin:/bin:/usr/local/bin:${process.env.PATH ?? ""}` },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const pair = (name: string): PemPair => ({
      cert: readFileSync(join(dir, `${name}.crt`), "utf8"),
      key: readFileSync(join(dir, `${name}.key`), "utf8"),
    });
    cached = {
      ca: pair("ca"),
      rogueCa: pair("rogue"),
      server: pair("server"),
      serverDc2: pair("serverdc2"),
      serverDc3: pair("serverdc3"),
      client: pair("client"),
      rogueClient: pair("rogueclient"),
    };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Writes a server's TLS files for datacenter `dc` ("dc1", "dc2" or "dc3": the test PKI's server certificates)
 * into `dir` (created), and returns the agent config keys that use them with the full verification
 * a cross-datacenter setup needs (`verify_incoming_rpc`, `verify_outgoing`, `verify_server_hostname`).
 */
export function writeServerTlsConfig(dir: string, dc: "dc1" | "dc2" | "dc3"): Record<string, unknown> {
  const pki = testPki();
  const pair = dc === "dc1" ? pki.server : dc === "dc2" ? pki.serverDc2 : pki.serverDc3;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "ca.pem"), pki.ca.cert);
  writeFileSync(join(dir, "cert.pem"), pair.cert);
  writeFileSync(join(dir, "key.pem"), pair.key);
  return {
    ca_file: join(dir, "ca.pem"), cert_file: join(dir, "cert.pem"), key_file: join(dir, "key.pem"),
    verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true,
  };
}
