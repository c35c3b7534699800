/**
 * `causeway tls ca create` and `causeway tls cert create`: Consul's built-in helpers for agent TLS
 * (command/tls/ca/create/tls_ca_create.go and command/tls/cert/create/tls_cert_create.go in
 * hashicorp/consul), with the same flags, defaults, file names and "==> Saved" lines.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { certificateMatchesKey, createCa, createLeaf, parseIp, type LeafUsage, type RandomBytes } from "../../lib/index.ts";
import { cryptoRng } from "../../platform/index.ts";
import type { Command, CommandIo } from "../command.ts";
import { formatFlags, parseFlags, UsageError, type FlagSpec, type ParsedFlags } from "../flags.ts";

/** What the tls commands take from the outside world; tests pass a temp dir, a fixed clock, a seeded source. */
export interface TlsCommandDeps {
  /** Directory in which files are created and relative -ca/-key paths are resolved. */
  readonly cwd: () => string;
  /** Milliseconds since the epoch; the start of validity. */
  readonly now: () => number;
  /** Randomness for serial numbers. */
  readonly rng: RandomBytes;
}

const CA_FLAGS: FlagSpec[] = [
  { name: "days", kind: "int", arg: "<days>", usage: "Number of days the CA is valid for. Default 1825 (about 5 years)." },
  { name: "domain", kind: "string", arg: "<domain>", usage: 'DNS domain of the cluster; names the files and, with -name-constraint, is a permitted domain. Default "consul".' },
  { name: "name-constraint", kind: "bool", usage: "Add X.509 name constraints: the CA then only signs certificates for localhost, -domain and -additional-name-constraint. Cannot be added later." },
  { name: "additional-name-constraint", kind: "strings", arg: "<domain>", usage: "Another permitted DNS domain. Only used with -name-constraint." },
  { name: "common-name", kind: "string", arg: "<name>", usage: 'Common Name of the CA. Default "Causeway Agent CA <serial>".' },
];

const CERT_FLAGS: FlagSpec[] = [
  { name: "server", kind: "bool", usage: "Generate a server certificate." },
  { name: "client", kind: "bool", usage: "Generate a client certificate." },
  { name: "cli", kind: "bool", usage: "Generate a cli certificate." },
  { name: "dc", kind: "string", arg: "<dc>", usage: 'Datacenter of the certificate. Default "dc1".' },
  { name: "domain", kind: "string", arg: "<domain>", usage: 'DNS domain of the cluster. Default "consul".' },
  { name: "node", kind: "string", arg: "<name>", usage: "With -server, adds the DNS name <node>.server.<dc>.<domain>." },
  { name: "days", kind: "int", arg: "<days>", usage: "Number of days the certificate is valid for. Default 365." },
  { name: "additional-dnsname", kind: "strings", arg: "<name>", usage: "Another DNS name for the Subject Alternative Names. localhost is always included." },
  { name: "additional-ipaddress", kind: "strings", arg: "<ip>", usage: "Another IP address for the Subject Alternative Names. 127.0.0.1 is always included (not for -cli)." },
  { name: "ca", kind: "string", arg: "<path>", usage: 'The CA certificate. Default "<domain>-agent-ca.pem".' },
  { name: "key", kind: "string", arg: "<path>", usage: 'The CA private key. Default "<domain>-agent-ca-key.pem".' },
];

const TLS_HELP = `Usage: causeway tls <subcommand> [options] [filename-prefix]

  Helpers for setting up a CA and certificates for agent TLS, as Consul's "consul tls".

  Create a CA:
    $ causeway tls ca create
    ==> Saved consul-agent-ca.pem
    ==> Saved consul-agent-ca-key.pem

  Create a server certificate:
    $ causeway tls cert create -server -dc dc1 -node n1
    ==> Saved dc1-server-consul-0.pem
    ==> Saved dc1-server-consul-0-key.pem

Subcommands:
    ca      Helpers for CAs
    cert    Helpers for certificates
`;

const CA_HELP = `Usage: causeway tls ca <subcommand> [options]

  Helpers for certificate authorities.

Subcommands:
    create    Create a new CA
`;

const CERT_HELP = `Usage: causeway tls cert <subcommand> [options]

  Helpers for certificates.

Subcommands:
    create    Create a new certificate
`;

const CA_CREATE_HELP = `Usage: causeway tls ca create [options]

  Creates a CA (ECDSA P-256) and writes <domain>-agent-ca.pem and <domain>-agent-ca-key.pem
  to the current directory. Existing files are never overwritten.

Options:

${formatFlags(CA_FLAGS)}
`;

const CERT_CREATE_HELP = `Usage: causeway tls cert create -server|-client|-cli [options]

  Creates a certificate signed by the CA and writes <dc>-<kind>-<domain>-<n>.pem and
  <dc>-<kind>-<domain>-<n>-key.pem, n being the first index whose files do not exist yet.

  Server certificates name server.<dc>.<domain> (and <node>.server.<dc>.<domain> with -node),
  localhost and 127.0.0.1; client certificates client.<dc>.<domain>, localhost and 127.0.0.1;
  cli certificates cli.<dc>.<domain> and localhost.

Options:

${formatFlags(CERT_FLAGS)}
`;

const SERVER_WARNING = `==> WARNING: Server Certificates grants authority to become a
    server and access all state in the cluster including root keys
    and all ACL tokens. Do not distribute them to production hosts
    that are not server nodes. Store them as securely as CA keys.
`;

/** An error the command reports as one line on stderr with exit code 1. */
class TlsError extends Error {}

/** Builds the `tls` command over the given cwd, clock and randomness. */
export function createTlsCommand(deps: TlsCommandDeps): Command {
  return {
    name: "tls",
    synopsis: "Builtin helpers for creating CAs and certificates",
    async run(argv, io) {
      const [group, verb, ...rest] = argv;
      const isHelp = (a: string | undefined) => a === undefined || a === "-h" || a === "-help" || a === "--help";
      if (isHelp(group)) return help(io, TLS_HELP, group !== undefined);
      if (group !== "ca" && group !== "cert") return usageError(io, `unknown subcommand "${group}"`, TLS_HELP);
      const groupHelp = group === "ca" ? CA_HELP : CERT_HELP;
      if (isHelp(verb)) return help(io, groupHelp, verb !== undefined);
      if (verb !== "create") return usageError(io, `unknown subcommand "${group} ${verb}"`, groupHelp);
      const [specs, leafHelp] = group === "ca" ? [CA_FLAGS, CA_CREATE_HELP] : [CERT_FLAGS, CERT_CREATE_HELP];
      let parsed: ParsedFlags;
      try {
        parsed = parseFlags(specs, rest);
        if (!parsed.help && parsed.rest.length > 0) throw new UsageError(`unexpected argument "${parsed.rest[0]}"`);
      } catch (err) {
        if (err instanceof UsageError) return usageError(io, err.message, leafHelp);
        throw err;
      }
      if (parsed.help) return help(io, leafHelp, true);
      try {
        await (group === "ca" ? caCreate(parsed, deps, io) : certCreate(parsed, deps, io));
        return 0;
      } catch (err) {
        if (!(err instanceof TlsError)) throw err;
        io.err(`${err.message}\n`);
        return 1;
      }
    },
  };
}

/** The `tls` command on the real clock, the CSPRNG and the process's working directory. */
export const tlsCommand: Command = createTlsCommand({ cwd: () => process.cwd(), now: () => Date.now(), rng: cryptoRng() });

function help(io: CommandIo, text: string, asked: boolean): number {
  (asked ? io.out : io.err)(text);
  return asked ? 0 : 1;
}

function usageError(io: CommandIo, message: string, text: string): number {
  io.err(`${message}\n\n${text}`);
  return 1;
}

async function caCreate(p: ParsedFlags, deps: TlsCommandDeps, io: CommandIo): Promise<void> {
  const days = positiveDays(p, 1825);
  const domain = nonEmpty(p, "domain", "consul");
  const certName = `${domain}-agent-ca.pem`;
  const keyName = `${domain}-agent-ca-key.pem`;
  for (const name of [certName, keyName]) {
    if (existsSync(join(deps.cwd(), name))) throw new TlsError(`${name} already exists.`);
  }
  const constrained = p.values.get("name-constraint") === true;
  const extra = ((p.values.get("additional-name-constraint") as string[] | undefined) ?? []).map((s) => s.trim()).filter(Boolean);
  const common = p.values.get("common-name") as string | undefined;
  const ca = await createCa({
    days, now: deps.now(), rng: deps.rng,
    ...(common ? { commonName: common } : {}),
    ...(constrained ? { nameConstraints: { permittedDns: [...extra, domain, "localhost"] } } : {}),
  });
  save(deps, io, certName, ca.certPem, 0o644);
  save(deps, io, keyName, ca.keyPem, 0o600);
}

async function certCreate(p: ParsedFlags, deps: TlsCommandDeps, io: CommandIo): Promise<void> {
  const kinds = (["server", "client", "cli"] as const).filter((k) => p.values.get(k) === true);
  if (kinds.length !== 1) throw new TlsError("Please provide either -server, -client, or -cli");
  const kind = kinds[0]!;
  const node = (p.values.get("node") as string | undefined) ?? "";
  if (node !== "" && kind !== "server") throw new TlsError("-node requires -server");
  const dc = nonEmpty(p, "dc", "dc1");
  const domain = nonEmpty(p, "domain", "consul");
  const days = positiveDays(p, 365);
  const dnsNames = ((p.values.get("additional-dnsname") as string[] | undefined) ?? []).map((s) => s.trim()).filter(Boolean);
  const ipAddresses = ((p.values.get("additional-ipaddress") as string[] | undefined) ?? []).map((s) => s.trim()).filter(Boolean);
  for (const ip of ipAddresses) {
    try {
      parseIp(ip);
    } catch {
      throw new TlsError(`invalid value "${ip}" for flag -additional-ipaddress: not an IP address`);
    }
  }
  const name = `${kind}.${dc}.${domain}`;
  if (node !== "") dnsNames.push(`${node}.server.${dc}.${domain}`);
  dnsNames.push(name, "localhost");
  if (kind !== "cli") ipAddresses.push("127.0.0.1");
  const usage: LeafUsage = kind === "cli" ? "cli" : kind;

  const prefix = `${dc}-${kind}-${domain}`;
  const [certName, keyName] = freeNames(deps, prefix);
  const caFile = nonEmpty(p, "ca", `${domain}-agent-ca.pem`);
  const keyFile = nonEmpty(p, "key", `${domain}-agent-ca-key.pem`);
  const caPem = readText(deps, caFile, "Error reading CA");
  const caKeyPem = readText(deps, keyFile, "Error reading CA key");
  if (kind === "server") io.out(SERVER_WARNING);
  io.out(`==> Using ${caFile} and ${keyFile}\n`);
  let matches: boolean;
  try {
    matches = await certificateMatchesKey(caPem, caKeyPem);
  } catch (err) {
    throw new TlsError(`Error reading CA: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!matches) throw new TlsError(`${keyFile} is not the private key of ${caFile}`);
  const leaf = await createLeaf({ caCertPem: caPem, caKeyPem, commonName: name, dnsNames, ipAddresses, days, now: deps.now(), rng: deps.rng, usage });
  save(deps, io, certName, leaf.certPem, 0o644);
  save(deps, io, keyName, leaf.keyPem, 0o600);
}

/** Consul's naming: the first n in 0..10000 for which neither `<prefix>-<n>.pem` nor `<prefix>-<n>-key.pem` exists. */
function freeNames(deps: TlsCommandDeps, prefix: string): [string, string] {
  for (let i = 0; i <= 10_000; i++) {
    const cert = `${prefix}-${i}.pem`, key = `${prefix}-${i}-key.pem`;
    if (!existsSync(join(deps.cwd(), cert)) && !existsSync(join(deps.cwd(), key))) return [cert, key];
  }
  throw new TlsError("Could not find a filename that doesn't already exist");
}

function readText(deps: TlsCommandDeps, file: string, what: string): string {
  try {
    return readFileSync(isAbsolute(file) ? file : join(deps.cwd(), file), "utf8");
  } catch (err) {
    throw new TlsError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Writes a new file; `wx` makes an existing file an error instead of overwriting it (also under a race). */
function save(deps: TlsCommandDeps, io: CommandIo, name: string, text: string, mode: number): void {
  try {
    writeFileSync(join(deps.cwd(), name), text, { flag: "wx", mode });
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new TlsError(code === "EEXIST" ? `${name} already exists.` : `Error writing ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  io.out(`==> Saved ${name}\n`);
}

function positiveDays(p: ParsedFlags, fallback: number): number {
  const days = (p.values.get("days") as number | undefined) ?? fallback;
  if (days <= 0) throw new TlsError(`invalid value "${days}" for flag -days: must be a positive number of days`);
  return days;
}

function nonEmpty(p: ParsedFlags, flag: string, fallback: string): string {
  const v = p.values.get(flag) as string | undefined;
  if (v === undefined) return fallback;
  if (v.trim() === "") throw new TlsError(`invalid value "" for flag -${flag}: must not be empty`);
  return v.trim();
}
