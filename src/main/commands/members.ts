/**
 * `causeway members`: Consul's `consul members` (command/members/members.go in hashicorp/consul) over
 * the agent's GET /v1/agent/members. Same flags, same filtering and sorting, same columns
 * (`Node Address Status Type Build Protocol DC Segment`, or `Node Address Status Tags` with
 * -detailed), aligned as ryanuber/columnize does, and the same exit codes: 0 with output, 1 on an error,
 * 2 when no member matches.
 */
import type { Command, CommandIo } from "../command.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { agentClientFor, HTTP_ADDR_FLAG, processHttpDeps, type HttpCommandDeps } from "./support/http_client.ts";

/** `api.AllSegments`. */
const ALL_SEGMENTS = "_all";

/** `serf.MemberStatus.String()`. */
const STATUS_NAMES = ["none", "alive", "leaving", "left", "failed"] as const;

/** One entry of GET /v1/agent/members (the Go API's `AgentMember`, the fields used here). */
export interface AgentMember {
  readonly Name: string;
  readonly Addr: string;
  readonly Port: number;
  readonly Tags: Readonly<Record<string, string>> | null;
  readonly Status: number;
}

const FLAGS: FlagSpec[] = [
  { name: "detailed", kind: "bool", usage: "Provides detailed information about nodes." },
  { name: "wan", kind: "bool", usage: "If the agent is in server mode, this can be used to return the other peers in the WAN pool." },
  { name: "status", kind: "string", arg: "<regexp>", usage: 'If provided, output is filtered to only nodes matching the regular expression for status. Default ".*".' },
  { name: "segment", kind: "string", arg: "<name>", usage: `(Enterprise-only in Consul) If provided, output is filtered to only nodes in the given segment. Default "${ALL_SEGMENTS}".` },
  HTTP_ADDR_FLAG,
];

const HELP = `Usage: causeway members [options]

  Outputs the members of a running agent.

${formatFlags(FLAGS)}
`;

/** Builds `causeway members` over the given environment (for the agent address) and fetch. */
export function createMembersCommand(deps: HttpCommandDeps = processHttpDeps): Command {
  return {
    name: "members",
    synopsis: "Lists the members of a cluster",
    async run(argv, io) {
      const parsed = parseCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const flag = <T>(name: string) => parsed.values.get(name) as T | undefined;
      const segment = flag<string>("segment") ?? ALL_SEGMENTS;
      let statusRe: RegExp;
      try {
        statusRe = new RegExp(flag<string>("status") ?? ".*");
      } catch (err) {
        io.err(`Failed to compile status regexp: ${(err as Error).message}\n`);
        return 1;
      }
      let members: AgentMember[];
      try {
        const client = agentClientFor(flag<string>("http-addr"), deps);
        const query: Record<string, string> = { segment };
        if (flag<boolean>("wan")) query.wan = "1";
        members = ((await client.getJson("/v1/agent/members", query)) as AgentMember[] | null) ?? [];
      } catch (err) {
        io.err(`Error retrieving members: ${(err as Error).message}\n`);
        return 1;
      }
      return printMembers(members, { detailed: flag<boolean>("detailed") ?? false, segment, statusRe }, io);
    },
  };
}

/** `causeway members` against the process environment and the runtime's fetch. */
export const membersCommand: Command = createMembersCommand();

/**
 * The body of Consul's members.Run after the request: marks empty segments `<default>` and, when all
 * segments were asked for, servers `<all>`; drops members whose status name does not match; sorts by
 * segment then name; prints the table. Returns the exit code (2 when nothing matched, printing nothing).
 */
export function printMembers(members: readonly AgentMember[], options: { detailed: boolean; segment: string; statusRe: RegExp }, io: CommandIo): number {
  const rows = members
    .map((m) => {
      const tags: Record<string, string> = { ...(m.Tags ?? {}) };
      if (!tags.segment) tags.segment = "<default>";
      if (options.segment === ALL_SEGMENTS && tags.role === "consul") tags.segment = "<all>";
      return { ...m, Tags: tags };
    })
    .filter((m) => options.statusRe.test(statusName(m.Status)));
  if (rows.length === 0) return 2;
  rows.sort((a, b) => compare(a.Tags.segment!, b.Tags.segment!) || compare(a.Name, b.Name));
  const lines = options.detailed ? detailedLines(rows) : standardLines(rows);
  io.out(`${columnize(lines)}\n`);
  return 0;
}

function standardLines(members: readonly AgentMember[]): string[] {
  const lines = ["Node|Address|Status|Type|Build|Protocol|DC|Segment"];
  for (const m of members) {
    const tags = m.Tags ?? {};
    const addr = tcpAddr(m.Addr, m.Port);
    const status = statusName(m.Status);
    let build = tags.build ?? "";
    if (build === "") build = "< 0.3";
    else if (build.includes(":")) build = build.slice(0, build.indexOf(":"));
    const rest = `${build}|${tags.vsn ?? ""}|${tags.dc ?? ""}|${tags.segment ?? ""}`;
    if (tags.role === "node") lines.push(`${m.Name}|${addr}|${status}|client|${rest}`);
    else if (tags.role === "consul") lines.push(`${m.Name}|${addr}|${status}|server|${rest}`);
    else lines.push(`${m.Name}|${addr}|${status}|unknown||||`);
  }
  return lines;
}

function detailedLines(members: readonly AgentMember[]): string[] {
  const lines = ["Node|Address|Status|Tags"];
  for (const m of members) {
    const tags = m.Tags ?? {};
    const pairs = Object.keys(tags)
      .sort(compare)
      .map((k) => `${k}=${tags[k]}`)
      .join(",");
    lines.push(`${m.Name}|${tcpAddr(m.Addr, m.Port)}|${statusName(m.Status)}|${pairs}`);
  }
  return lines;
}

/** `serf.MemberStatus(n).String()`; Go panics on an unknown value, we print it. */
function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `unknown(${status})`;
}

/** Go's `net.TCPAddr{IP: net.ParseIP(addr), Port}.String()`: IPv6 bracketed. */
function tcpAddr(addr: string, port: number): string {
  return addr.includes(":") ? `[${addr}]:${port}` : `${addr}:${port}`;
}

/** Byte-wise string order, as Go's `<` on strings (for the ASCII names and tags seen here). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * ryanuber/columnize `SimpleFormat`: splits lines on `|`, trims each cell, pads every column but a
 * line's last to the widest cell of that column, joins with two spaces; no trailing newline.
 */
export function columnize(lines: readonly string[]): string {
  const rows = lines.map((line) => line.split("|").map((cell) => cell.trim()));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - [...cell].length) + "  ")).join(""))
    .join("\n");
}
