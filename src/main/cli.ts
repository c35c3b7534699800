#!/usr/bin/env bun
/**
 * The `causeway` command: dispatches to a subcommand and exits with its code.
 * Every command answers -h/--help.
 */
import type { Command, CommandIo } from "./command.ts";
import { agentCommand } from "./commands/agent.ts";
import { forceLeaveCommand } from "./commands/force_leave.ts";
import { joinCommand } from "./commands/join.ts";
import { keygenCommand } from "./commands/keygen.ts";
import { keyringCommand } from "./commands/keyring.ts";
import { leaveCommand } from "./commands/leave.ts";
import { membersCommand } from "./commands/members.ts";
import { tlsCommand } from "./commands/tls.ts";
import { versionCommand } from "./commands/version.ts";
import { catalogCommand } from "./commands/catalog.ts";
import { kvCommand } from "./commands/kv.ts";
import { operatorCommand } from "./commands/operator.ts";
import { servicesCommand } from "./commands/services.ts";
import { snapshotCommand } from "./commands/snapshot.ts";
import { connectCommand } from "./commands/connect.ts";
import { configCommand } from "./commands/config.ts";
import { intentionCommand } from "./commands/intention.ts";
import { rttCommand } from "./commands/rtt.ts";
import { gatewayCommand } from "./commands/gateway.ts";
import { monitorCommand } from "./commands/monitor.ts";
import { aclCommand } from "./commands/acl.ts";
import { eventCommand } from "./commands/event.ts";
import { infoCommand } from "./commands/info.ts";
import { lockCommand } from "./commands/lock.ts";
import { maintCommand } from "./commands/maint.ts";
import { reloadCommand } from "./commands/reload.ts";
import { validateCommand } from "./commands/validate.ts";
import { watchCommand } from "./commands/watch.ts";

export const COMMANDS: readonly Command[] = [
  agentCommand, forceLeaveCommand, joinCommand, keygenCommand, keyringCommand, leaveCommand, membersCommand, tlsCommand, versionCommand,
  kvCommand,
  catalogCommand,
  servicesCommand,
  snapshotCommand,
  operatorCommand,
  connectCommand,
  gatewayCommand,
  configCommand,
  intentionCommand,
  rttCommand,
  monitorCommand,
  aclCommand,
  eventCommand,
  infoCommand,
  lockCommand,
  maintCommand,
  reloadCommand,
  validateCommand,
  watchCommand,
];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: causeway [--version] [--help] <command> [<args>]

Available commands are:
${[...COMMANDS].sort((a, b) => (a.name < b.name ? -1 : 1)).map((c) => `    ${c.name.padEnd(width)}    ${c.synopsis}`).join("\n")}
`;
}

/** Runs the CLI with the given arguments (without the program name) and resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? 1 : 0;
  }
  if (name === "-v" || name === "-version" || name === "--version") return versionCommand.run([], io);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`causeway: unknown command "${name}"\n\n${usage()}`);
    return 1;
  }
  return command.run(rest, io);
}

if (import.meta.main) {
  const io: CommandIo = { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) };
  const code = await runCli(process.argv.slice(2), io);
  process.exit(code);
}
