/**
 * Encoding helpers for the X.509 tooling: PEM armour, IP address bytes, serial numbers and private-key
 * container conversion (SEC1 / PKCS#1 -> PKCS#8). Pure: no clock, no randomness of its own.
 */
import * as asn1js from "asn1js";

/** The source of randomness for serial numbers; `Rng` from src/platform satisfies it structurally. */
export interface RandomBytes {
  /** A fresh buffer of `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** OIDs used across the X.509 files. */
export const OID = {
  commonName: "2.5.4.3",
  ecPublicKey: "1.2.840.10045.2.1",
  rsaEncryption: "1.2.840.113549.1.1.1",
  p256: "1.2.840.10045.3.1.7",
  p384: "1.3.132.0.34",
  p521: "1.3.132.0.35",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  nameConstraints: "2.5.29.30",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** Base64 of `der` wrapped at 64 columns between `-----BEGIN label-----` and `-----END label-----`, ending in "\n". */
export function pemEncode(label: string, der: Uint8Array | ArrayBuffer): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
  const b64 = btoa(bin);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** One PEM block: its label and DER bytes. */
export interface PemBlock {
  readonly label: string;
  readonly der: Uint8Array<ArrayBuffer>;
}

/** Every PEM block in `text`, in order. Text outside blocks (comments, "Bag Attributes") is ignored. */
export function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (const m of text.matchAll(re)) {
    const body = m[2]!.split(/\r?\n/).filter((l) => !l.includes(":")).join("").replace(/\s+/g, "");
    const bin = atob(body);
    const der = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) der[i] = bin.charCodeAt(i);
    out.push({ label: m[1]!, der });
  }
  return out;
}

/**
 * DER bytes of the first PEM block whose label is `label` (any label when omitted).
 * Throws an Error naming the label when there is none or the base64 is malformed.
 */
export function pemDecode(pem: string, label?: string): Uint8Array<ArrayBuffer> {
  let blocks: PemBlock[];
  try {
    blocks = pemBlocks(pem);
  } catch {
    throw new Error(`malformed PEM${label ? ` ${label}` : ""} block`);
  }
  const block = blocks.find((b) => label === undefined || b.label === label);
  if (!block) throw new Error(label ? `no PEM ${label} block found` : "no PEM block found");
  return block.der;
}

/**
 * A positive DER INTEGER body from 16 random bytes (128 bits, like Go's `rand.Int(2^128)` in Consul's
 * tlsutil): a leading 0x00 is added when the top bit is set and redundant leading zeros are dropped.
 */
export function randomSerial(rng: RandomBytes): Uint8Array<ArrayBuffer> {
  let b = Array.from(rng.bytes(16));
  if (!b.some((x) => x !== 0)) b[15] = 1;
  while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.slice(1);
  if (b[0]! >= 0x80) b = [0, ...b];
  return Uint8Array.from(b);
}

/** The unsigned big-endian integer in `bytes` as a decimal string. */
export function bytesToDecimal(bytes: Uint8Array): string {
  let n = 0n;
  for (const x of bytes) n = (n << 8n) | BigInt(x);
  return n.toString(10);
}

/** Parses a dotted IPv4 or an RFC 4291 IPv6 text address to 4 or 16 bytes; throws on anything else. */
export function parseIp(text: string): Uint8Array {
  const v4 = parseIpv4(text);
  if (v4) return v4;
  const v6 = parseIpv6(text);
  if (v6) return v6;
  throw new Error(`invalid IP address "${text}"`);
}

/**
 * Four decimal octets, no leading zeros: one pass over the characters (no split, no regex), since DNS
 * answers encode an address per record on their hot path.
 */
function parseIpv4(text: string): Uint8Array | undefined {
  const out = new Uint8Array(4);
  let part = 0, value = 0, digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; // a final "." closes the last octet
    if (c === 46) {
      if (digits === 0 || part > 3) return undefined;
      out[part++] = value;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return undefined; // a leading zero
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return undefined;
    } else {
      return undefined;
    }
  }
  return part === 4 ? out : undefined;
}

function parseIpv6(text: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.split("::").length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === "") return [];
    const out: number[] = [];
    const parts = s.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseIpv4(p);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(Number.parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const [head, tail] = text.split("::") as [string, string | undefined];
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  if (!h || !t) return undefined;
  const fill = 8 - h.length - t.length;
  if (tail === undefined ? fill !== 0 : fill < 1) return undefined;
  const all = [...h, ...new Array<number>(tail === undefined ? 0 : fill).fill(0), ...t];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Formats 4 or 16 address bytes: dotted IPv4, or IPv6 in RFC 5952 form (lower case, longest zero run as "::"). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  if (bytes.length !== 16) throw new Error(`invalid IP address length ${bytes.length}`);
  const g = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/**
 * Converts a private key PEM to PKCS#8 DER plus its algorithm. Accepts "PRIVATE KEY" (PKCS#8),
 * "EC PRIVATE KEY" (SEC1, what Consul's `tls ca create` writes) and "RSA PRIVATE KEY" (PKCS#1), the
 * first such block of `pem`. Throws an Error with a readable message on a malformed key or an
 * unsupported algorithm or curve.
 */
export function privateKeyToPkcs8(pem: string): { pkcs8: Uint8Array<ArrayBuffer>; algorithm: KeyAlgorithmInfo } {
  const blocks = pemBlocks(pem);
  const block = blocks.find((b) => /^(|EC |RSA )PRIVATE KEY$/.test(b.label));
  if (!block) throw new Error("no PEM PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY block found");
  if (block.label === "RSA PRIVATE KEY") {
    const info = asn1js.fromBER(block.der);
    if (info.offset === -1 || !(info.result instanceof asn1js.Sequence)) throw new Error("malformed RSA PRIVATE KEY (PKCS#1)");
    const algId = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: OID.rsaEncryption }), new asn1js.Null()] });
    return { pkcs8: wrapPkcs8(algId, block.der), algorithm: { kind: "RSA" } };
  }
  const label = block.label === "PRIVATE KEY" ? "PRIVATE KEY (PKCS#8)" : "EC PRIVATE KEY (SEC1)";
  const info = asn1js.fromBER(block.der);
  const parts = info.offset === -1 || !(info.result instanceof asn1js.Sequence) ? [] : info.result.valueBlock.value;
  if (block.label === "PRIVATE KEY") {
    const algId = parts[1];
    if (!(algId instanceof asn1js.Sequence) || !(parts[2] instanceof asn1js.OctetString)) throw new Error(`malformed ${label}`);
    return { pkcs8: block.der, algorithm: algorithmFromIdentifier(algId) };
  }
  if (!(parts[1] instanceof asn1js.OctetString)) throw new Error(`malformed ${label}`);
  const params = parts.find((p) => p.idBlock.tagClass === 3 && p.idBlock.tagNumber === 0) as asn1js.Constructed | undefined;
  const curveOid = params?.valueBlock.value?.[0];
  if (!(curveOid instanceof asn1js.ObjectIdentifier)) throw new Error("EC private key without named curve");
  const algId = new asn1js.Sequence({
    value: [new asn1js.ObjectIdentifier({ value: OID.ecPublicKey }), new asn1js.ObjectIdentifier({ value: curveOid.valueBlock.toString() })],
  });
  return { pkcs8: wrapPkcs8(algId, block.der), algorithm: algorithmFromIdentifier(algId) };
}

/** A key algorithm as WebCrypto needs it for import. */
export type KeyAlgorithmInfo = { kind: "EC"; namedCurve: "P-256" | "P-384" | "P-521" } | { kind: "RSA" };

const CURVE_NAMES: Readonly<Record<string, string>> = { "1.3.132.0.33": "P-224", "1.3.132.0.10": "secp256k1" };

/** Reads an AlgorithmIdentifier SEQUENCE { OID, params } (SPKI or PKCS#8). Throws on unsupported algorithms and curves. */
export function algorithmFromIdentifier(algId: asn1js.Sequence): KeyAlgorithmInfo {
  const [oid, params] = algId.valueBlock.value;
  const name = oid instanceof asn1js.ObjectIdentifier ? oid.valueBlock.toString() : "";
  if (name === OID.rsaEncryption) return { kind: "RSA" };
  if (name === OID.ecPublicKey) {
    const curve = params instanceof asn1js.ObjectIdentifier ? params.valueBlock.toString() : "";
    if (curve === OID.p256) return { kind: "EC", namedCurve: "P-256" };
    if (curve === OID.p384) return { kind: "EC", namedCurve: "P-384" };
    if (curve === OID.p521) return { kind: "EC", namedCurve: "P-521" };
    const known = CURVE_NAMES[curve];
    throw new Error(`unsupported EC curve ${known ? `${known} (${curve})` : curve || "(explicit parameters)"}: only P-256, P-384 and P-521 are supported`);
  }
  throw new Error(`unsupported key algorithm ${name || "(unknown)"}: only EC (P-256, P-384, P-521) and RSA keys are supported`);
}

/** The bit length of an unsigned big-endian integer (leading zero bytes ignored); 0 for zero. Lib-internal. */
export function bitLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return i >= bytes.length ? 0 : (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]!));
}

function wrapPkcs8(algId: asn1js.Sequence, inner: Uint8Array): Uint8Array<ArrayBuffer> {
  const seq = new asn1js.Sequence({
    value: [new asn1js.Integer({ value: 0 }), algId, new asn1js.OctetString({ valueHex: inner })],
  });
  return new Uint8Array(seq.toBER(false));
}
