/** What `causeway config read|list|delete` share: the -kind / -name flags and the entry's URL path. */
import type { CommandIo } from "../../command.ts";
import type { FlagSpec, ParsedFlags } from "../../flags.ts";
import { escapeKeyPath } from "../support/http_client.ts";
import { stringFlag } from "../support/index.ts";

export const kindFlag = (verb: string): FlagSpec => ({ name: "kind", kind: "string", arg: "<kind>", usage: `The kind of configuration to ${verb}.` });
export const nameFlag = (verb: string): FlagSpec => ({ name: "name", kind: "string", arg: "<name>", usage: `The name of configuration to ${verb}.` });

/** -kind (and -name when `withName`), or exit code 1 after Consul's "Must specify the -kind parameter". */
export function kindAndName(parsed: ParsedFlags, io: CommandIo, withName: boolean): { kind: string; name: string } | number {
  const kind = stringFlag(parsed, "kind") ?? "";
  const name = stringFlag(parsed, "name") ?? "";
  for (const [flag, value] of [["kind", kind], ...(withName ? [["name", name]] : [])] as const) {
    if (value === "") {
      io.err(`Must specify the -${flag} parameter\n`);
      return 1;
    }
  }
  return { kind, name };
}

/** `/v1/config/<kind>[/<name>]`, each part escaped as Go's URL.Path would be. */
export function configPath(kind: string, name?: string): string {
  return `/v1/config/${encodeURIComponent(kind)}${name === undefined ? "" : `/${escapeKeyPath(name)}`}`;
}
