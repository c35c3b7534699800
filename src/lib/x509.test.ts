import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import type { AddressInfo } from "node:net";
import {
  certificateMatchesKey, createCa, createLeaf, formatIp, parseCertificate, parseCertificates, parseIp, pemDecode, pemEncode,
  type CertAndKey, type RandomBytes,
} from "./index.ts";

const OPENSSL = "/usr/bin/openssl";
const dir = mkdtempSync(join(tmpdir(), "causeway-x509-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A deterministic byte source for tests (not random, just distinct per call). */
function counterRng(seed = 1): RandomBytes {
  let c = seed;
  return { bytes: (n) => Uint8Array.from({ length: n }, () => (c = (c * 1103515245 + 12345) >>> 0) >>> 24) };
}

let fileNo = 0;
function file(text: string): string {
  const p = join(dir, `f${fileNo++}.pem`);
  writeFileSync(p, text);
  return p;
}

function openssl(...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(OPENSSL, args, { encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

const NOW = Date.now();
const rng = counterRng(7);
const ca = await createCa({ commonName: "Causeway Test Agent CA", days: 30, now: NOW, rng });
const otherCa = await createCa({ days: 30, now: NOW, rng });
const leafOf = (issuer: CertAndKey, usage: "server" | "client" | "cli", extra: Partial<Parameters<typeof createLeaf>[0]> = {}) =>
  createLeaf({
    caCertPem: issuer.certPem, caKeyPem: issuer.keyPem, commonName: `${usage}.dc1.consul`,
    dnsNames: [`${usage}.dc1.consul`, "localhost"], ipAddresses: ["127.0.0.1"], days: 7, now: NOW, rng, usage, ...extra,
  });
const server = await leafOf(ca, "server", { dnsNames: ["n1.server.dc1.consul", "server.dc1.consul", "localhost"], ipAddresses: ["127.0.0.1", "::1"] });
const client = await leafOf(ca, "client");
const rogueServer = await leafOf(otherCa, "server");
const rogueClient = await leafOf(otherCa, "client");

describe("openssl accepts the certificates", () => {
  test("openssl verify -CAfile passes for leaves of the CA and fails for another CA's leaf", () => {
    expect(openssl("verify", "-CAfile", file(ca.certPem), file(server.certPem)).out).toContain(": OK");
    expect(openssl("verify", "-CAfile", file(ca.certPem), file(client.certPem)).ok).toBe(true);
    expect(openssl("verify", "-CAfile", file(ca.certPem), file(rogueServer.certPem)).ok).toBe(false);
  });

  test("openssl x509 -text shows CA:TRUE, key usages, EKU and SANs", () => {
    const caText = execFileSync(OPENSSL, ["x509", "-text", "-noout", "-in", file(ca.certPem)], { encoding: "utf8" });
    expect(caText).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(caText).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    expect(caText).toContain("Subject: CN = Causeway Test Agent CA");
    expect(caText).toContain("ecdsa-with-SHA256");
    const text = execFileSync(OPENSSL, ["x509", "-text", "-noout", "-in", file(server.certPem)], { encoding: "utf8" });
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(text).toContain("TLS Web Server Authentication, TLS Web Client Authentication");
    expect(text).toContain("DNS:n1.server.dc1.consul, DNS:server.dc1.consul, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    expect(text).toContain("ASN1 OID: prime256v1");
    // AKI of the leaf is the CA's SKI.
    const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)![1];
    expect(/Authority Key Identifier:\s+(?:keyid:)?([0-9A-F:]+)/.exec(text)![1]).toBe(ski!);
  });

  test("the key is PKCS#8 and openssl reads it as a P-256 key matching the certificate", () => {
    expect(server.keyPem.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
    const fromKey = execFileSync(OPENSSL, ["pkey", "-pubout", "-in", file(server.keyPem)], { encoding: "utf8" });
    const fromCert = execFileSync(OPENSSL, ["x509", "-pubkey", "-noout", "-in", file(server.certPem)], { encoding: "utf8" });
    expect(fromKey).toBe(fromCert);
  });

  test("cli certificates carry clientAuth only", () => {
    return leafOf(ca, "cli", { ipAddresses: [] }).then((cli) => {
      expect(parseCertificate(cli.certPem).extKeyUsage).toEqual(["clientAuth"]);
      expect(openssl("verify", "-CAfile", file(ca.certPem), "-purpose", "sslclient", file(cli.certPem)).ok).toBe(true);
    });
  });
});

describe("name constraints", () => {
  test("a constrained CA signs names inside its domains; openssl rejects a leaf outside them", async () => {
    const nc = await createCa({ days: 30, now: NOW, rng, nameConstraints: { permittedDns: ["consul", "localhost"] } });
    const text = execFileSync(OPENSSL, ["x509", "-text", "-noout", "-in", file(nc.certPem)], { encoding: "utf8" });
    expect(text).toMatch(/Name Constraints: critical\s+Permitted:\s+DNS:consul\s+DNS:localhost/);
    const inside = await leafOf(nc, "server");
    expect(openssl("verify", "-CAfile", file(nc.certPem), file(inside.certPem)).ok).toBe(true);
    const outside = await leafOf(nc, "server", { commonName: "evil.example.com", dnsNames: ["evil.example.com"] });
    const r = openssl("verify", "-CAfile", file(nc.certPem), file(outside.certPem));
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(/name constraint|permitted subtree/i);
  });
});

describe("node:tls accepts the output", () => {
  test("createSecureContext takes key, cert and ca", () => {
    expect(() => tls.createSecureContext({ key: server.keyPem, cert: server.certPem, ca: ca.certPem })).not.toThrow();
  });

  test("mutual TLS with servername server.dc1.consul succeeds; a peer from another CA is rejected", async () => {
    const srv = tls.createServer({ key: server.keyPem, cert: server.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (s) => {
      s.end(`hello ${s.authorized ? (s.getPeerCertificate().subject as { CN?: string }).CN : "stranger"}`);
    });
    const rogue = tls.createServer({ key: rogueServer.keyPem, cert: rogueServer.certPem }, (s) => s.end("rogue"));
    await Promise.all([srv, rogue].map((s) => new Promise<void>((r) => s.listen(0, "127.0.0.1", r))));
    const dial = (port: number, me: CertAndKey = client) =>
      new Promise<string>((resolve, reject) => {
        const sock = tls.connect({
          host: "127.0.0.1", port, servername: "server.dc1.consul", ca: ca.certPem, key: me.keyPem, cert: me.certPem,
          rejectUnauthorized: true,
        });
        let data = "";
        sock.on("data", (d) => (data += d));
        sock.on("end", () => resolve(data));
        sock.on("error", reject);
      });
    try {
      expect(await dial((srv.address() as AddressInfo).port)).toBe("hello client.dc1.consul");
      await expect(dial((rogue.address() as AddressInfo).port)).rejects.toThrow();
      // The server refuses a client certificate from another CA: the handshake fails or the
      // connection closes without the greeting (TLS 1.3 reports the client alert after the handshake).
      const refused = await dial((srv.address() as AddressInfo).port, rogueClient).catch((e: Error) => `error: ${e.message}`);
      expect(refused).not.toContain("hello");
    } finally {
      srv.close();
      rogue.close();
    }
  });
});

describe("parsing", () => {
  test("parseCertificate round-trips names, validity and the CA flag", async () => {
    const leaf = await leafOf(ca, "server", {
      dnsNames: ["a.example", "b.example"], ipAddresses: ["10.0.0.1", "2001:db8::1", "::ffff:1.2.3.4"], uris: ["spiffe://td/ns/default/dc/dc1/svc/web"],
    });
    const info = parseCertificate(leaf.certPem);
    expect(info.subjectCommonName).toBe("server.dc1.consul");
    expect(info.issuerCommonName).toBe("Causeway Test Agent CA");
    expect(info.dnsNames).toEqual(["a.example", "b.example"]);
    expect(info.ipAddresses).toEqual(["10.0.0.1", "2001:db8::1", "::ffff:102:304"]);
    expect(info.uris).toEqual(["spiffe://td/ns/default/dc/dc1/svc/web"]);
    expect(info.isCa).toBe(false);
    expect(info.notBefore.getTime()).toBe(Math.floor(NOW / 1000) * 1000);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(7 * 86_400_000);
    expect(parseCertificate(ca.certPem).isCa).toBe(true);
    expect(parseCertificates(ca.certPem + otherCa.certPem).map((c) => c.isCa)).toEqual([true, true]);
  });

  test("serials are positive 128-bit values from the injected bytes", async () => {
    const a = await createCa({ days: 1, now: NOW, rng: counterRng(42) });
    const b = await createCa({ days: 1, now: NOW, rng: counterRng(42) });
    const sa = parseCertificate(a.certPem).serialHex;
    expect(sa).toBe(parseCertificate(b.certPem).serialHex);
    expect(sa.length).toBeGreaterThan(28);
    expect(sa.length).toBeLessThanOrEqual(32);
    const high = await createCa({ days: 1, now: NOW, rng: { bytes: (n) => new Uint8Array(n).fill(0xff) } });
    expect(parseCertificate(high.certPem).serialHex).toBe("f".repeat(32));
    expect(openssl("x509", "-noout", "-serial", "-in", file(high.certPem)).out.trim()).toBe(`serial=${"F".repeat(32)}`);
  });

  test("certificateMatchesKey compares public keys, also for an openssl SEC1 key", async () => {
    expect(await certificateMatchesKey(server.certPem, server.keyPem)).toBe(true);
    expect(await certificateMatchesKey(server.certPem, client.keyPem)).toBe(false);
    const sec1 = execFileSync(OPENSSL, ["ec", "-in", file(server.keyPem)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    expect(sec1).toContain("BEGIN EC PRIVATE KEY");
    expect(await certificateMatchesKey(server.certPem, sec1)).toBe(true);
    await expect(certificateMatchesKey(server.certPem, "not a key")).rejects.toThrow(/PRIVATE KEY/);
  });

  test("a CA key in SEC1 form (as Consul writes it) can sign", async () => {
    const sec1 = execFileSync(OPENSSL, ["ec", "-in", file(ca.keyPem)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const leaf = await createLeaf({
      caCertPem: ca.certPem, caKeyPem: sec1, commonName: "x", dnsNames: ["x.consul"], ipAddresses: [], days: 1, now: NOW, rng, usage: "client",
    });
    expect(openssl("verify", "-CAfile", file(ca.certPem), file(leaf.certPem)).ok).toBe(true);
  });

  test("bad inputs throw", async () => {
    await expect(createCa({ days: 0, now: NOW, rng })).rejects.toThrow(/days/);
    await expect(leafOf(ca, "server", { ipAddresses: ["300.1.1.1"] })).rejects.toThrow(/invalid IP address "300.1.1.1"/);
    await expect(leafOf(ca, "server", { caCertPem: "nope" })).rejects.toThrow(/CERTIFICATE/);
    expect(() => parseCertificate(client.keyPem)).toThrow(/CERTIFICATE/);
  });
});

describe("encoding helpers", () => {
  test("pemEncode/pemDecode round-trip and wrap at 64 columns", () => {
    const der = Uint8Array.from({ length: 200 }, (_, i) => i);
    const pem = pemEncode("CERTIFICATE", der);
    expect(pem.split("\n").every((l) => l.length <= 64)).toBe(true);
    expect(pemDecode(`junk\n${pemEncode("OTHER", new Uint8Array([1]))}${pem}`, "CERTIFICATE")).toEqual(der);
    expect(() => pemDecode(pem, "PRIVATE KEY")).toThrow("no PEM PRIVATE KEY block found");
  });

  test.each([
    ["127.0.0.1", "127.0.0.1"], ["::1", "::1"], ["::", "::"], ["2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["fe80::", "fe80::"], ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"], ["::ffff:10.0.0.1", "::ffff:a00:1"], ["1::2:0:0:3", "1::2:0:0:3"],
  ])("parseIp/formatIp %s", (input, formatted) => {
    expect(formatIp(parseIp(input))).toBe(formatted);
  });

  test.each(["1.2.3", "01.2.3.4", "1.2.3.4.5", "::1::", "1:2:3:4:5:6:7:8:9", "12345::", "g::1", "", "localhost"])("parseIp rejects %p", (bad) => {
    expect(() => parseIp(bad)).toThrow(/invalid IP address/);
  });
});
