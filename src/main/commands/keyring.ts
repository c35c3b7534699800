/**
 * `causeway keyring`: Consul's `consul keyring` (command/keyring/keyring.go in hashicorp/consul) over
 * the agent's /v1/operator/keyring: exactly one of `-list`, `-install <key>`, `-use <key>`,
 * `-remove <key>`. Output as Consul's: an `==> ` line saying what happens, then for `-list` each pool
 * (`WAN:` or `<dc> (LAN):`) with `  <key> [<installed on>/<nodes>]` lines (sorted here; Go's map order
 * is random). Exit 0 when every node answered without error, 1 otherwise, with `error: <reason>`.
 */
import type { Command, CommandIo } from "../command.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { AgentHttpError, HTTP_ADDR_FLAG, processHttpDeps, resolveHttpAddr, type HttpCommandDeps } from "./support/http_client.ts";

/** The actions, in the order they are named in messages. */
const ACTIONS = ["list", "install", "use", "remove"] as const;
type Action = (typeof ACTIONS)[number];

const FLAGS: FlagSpec[] = [
  { name: "install", kind: "string", arg: "<key>", usage: "Install a new encryption key. This will broadcast the new key to all members in the cluster." },
  { name: "list", kind: "bool", usage: "List all keys currently in use within the cluster." },
  { name: "remove", kind: "string", arg: "<key>", usage: "Remove the given key from the cluster. This operation may only be performed on keys which are not currently the primary key." },
  { name: "use", kind: "string", arg: "<key>", usage: "Change the primary encryption key, which is used to encrypt messages. The key must already be installed before this operation can succeed." },
  { name: "relay-factor", kind: "int", arg: "<n>", usage: "Accepted for compatibility (0 to 5); responses are not relayed through other nodes." },
  HTTP_ADDR_FLAG,
];

const HELP = `Usage: causeway keyring [options]

  Manages encryption keys used for gossip messages. Gossip encryption is
  optional. When enabled, this command may be used to examine active encryption
  keys in the cluster, add new keys, and remove old ones. When combined, this
  functionality provides the ability to perform key rotation cluster-wide,
  without disrupting the cluster.

  On a server, every operation affects both the LAN and the WAN keyring in
  lock-step; on a client agent, the LAN keyring.

  All variations of the keyring command return 0 if all nodes reply and there
  are no errors. If any node fails to reply or reports failure, the exit code
  will be 1.

${formatFlags(FLAGS)}
`;

/** One entry of GET /v1/operator/keyring (the Go API's `KeyringResponse`, the fields used here). */
interface KeyringResponse {
  readonly WAN: boolean;
  readonly Datacenter: string;
  readonly Segment: string;
  readonly Keys: Readonly<Record<string, number>> | null;
  readonly NumNodes: number;
}

const INFO: Readonly<Record<Action, string>> = {
  list: "Gathering installed encryption keys...",
  install: "Installing new gossip encryption key...",
  use: "Changing primary gossip encryption key...",
  remove: "Removing gossip encryption key...",
};
const METHOD: Readonly<Record<Exclude<Action, "list">, string>> = { install: "POST", use: "PUT", remove: "DELETE" };

/** Builds `causeway keyring` over the given environment (for the agent address) and fetch. */
export function createKeyringCommand(deps: HttpCommandDeps = processHttpDeps): Command {
  return {
    name: "keyring",
    synopsis: "Manages gossip layer encryption keys",
    async run(argv, io) {
      const parsed = parseCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const given = ACTIONS.filter((a) => parsed.values.has(a) && parsed.values.get(a) !== false);
      for (const a of given) {
        if (a !== "list" && parsed.values.get(a) === "") {
          io.err(`Error: -${a} needs a key (base64, as made by "causeway keygen")\n`);
          return 1;
        }
      }
      if (given.length > 1) {
        io.err(`Only a single action is allowed (got ${given.map((a) => `-${a}`).join(" and ")})\n`);
        return 1;
      }
      if (given.length === 0) {
        io.err(`One of -list, -install, -use or -remove is required\n\n${HELP}`);
        return 1;
      }
      const relay = (parsed.values.get("relay-factor") as number | undefined) ?? 0;
      if (relay < 0 || relay > 5) {
        io.err("Error parsing relay factor: Relay factor must be in range: [0, 5]\n");
        return 1;
      }
      let base: string;
      try {
        base = resolveHttpAddr(parsed.values.get("http-addr") as string | undefined, deps.env());
      } catch (err) {
        io.err(`Error connecting to the agent: ${(err as Error).message}\n`);
        return 1;
      }
      const action = given[0]!;
      const query = relay > 0 ? `?relay-factor=${relay}` : "";
      io.out(`==> ${INFO[action]}\n`);
      try {
        if (action === "list") {
          const text = await request(deps, "GET", `${base}/v1/operator/keyring${query}`);
          printList((JSON.parse(text) as KeyringResponse[] | null) ?? [], io);
        } else {
          await request(deps, METHOD[action], `${base}/v1/operator/keyring${query}`, JSON.stringify({ Key: parsed.values.get(action) }));
        }
      } catch (err) {
        io.err(`error: ${(err as Error).message}\n`);
        return 1;
      }
      return 0;
    },
  };
}

/** `causeway keyring` against the process environment. */
export const keyringCommand: Command = createKeyringCommand();

/** Consul's handleList: a blank line, the pool's name, then each key with its count. */
function printList(responses: readonly KeyringResponse[], io: CommandIo): void {
  for (const r of responses) {
    let pool = `${r.Datacenter} (LAN)`;
    if (r.Segment) pool += ` [${r.Segment}]`;
    if (r.WAN) pool = "WAN";
    io.out(`\n${pool}:\n`);
    for (const key of Object.keys(r.Keys ?? {}).sort()) io.out(`  ${key} [${r.Keys![key]}/${r.NumNodes}]\n`);
  }
}

/**
 * One request with an optional JSON body; resolves to the response text. A non-200 answer rejects with
 * AgentHttpError (`Unexpected response code: 500 (<body>)`, as the Go client words it), a transport
 * failure with `<Method> "<url>": <cause>`.
 */
async function request(deps: HttpCommandDeps, method: string, url: string, body?: string): Promise<string> {
  const fetchFn = (deps.fetch ?? fetch) as (input: string, init: { method: string; body?: string; headers?: Record<string, string> }) => Promise<Response>;
  let res: Response;
  let text: string;
  try {
    res = await fetchFn(url, body === undefined ? { method } : { method, body, headers: { "Content-Type": "application/json" } });
    text = await res.text();
  } catch (err) {
    const code = (err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
    const cause = code === "ECONNREFUSED" || code === "ConnectionRefused" ? "connection refused" : (err as Error)?.message ?? String(err);
    throw new Error(`${method[0]}${method.slice(1).toLowerCase()} "${url}": ${cause}`);
  }
  if (res.status !== 200) throw new AgentHttpError(res.status, text.trim());
  return text;
}
