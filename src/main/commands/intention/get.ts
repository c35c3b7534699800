/**
 * `causeway intention get`: Consul 1.8's `consul intention get` (command/intention/get): the intention
 * by ID, or by `SRC DST` (found in the list), shown as aligned `Key: value` lines. "Created At" is printed
 * in Go's RFC 850 layout in UTC (Consul uses the local zone).
 */
import type { Command } from "../../command.ts";
import { columnizeRows, commandHelp, processCliDeps, type CliDeps } from "../support/index.ts";
import { destinationString, intentionTarget, sourceString, type IntentionView } from "./finder.ts";

const HELP = commandHelp(
  `Usage: causeway intention get [options] SRC DST
Usage: causeway intention get [options] ID

  Read and show the details about an intention. The intention can be looked
  up via an exact source/destination match or via the unique intention ID.

      $ causeway intention get web db
`,
  [],
);

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Go's time.RFC850 ("Monday, 02-Jan-06 15:04:05 MST") of an RFC 3339 time, in UTC; the input when unparseable. */
export function rfc850Utc(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${DAYS[d.getUTCDay()]}, ${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${p(d.getUTCFullYear() % 100)} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC`;
}

export function createIntentionGetCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "get",
    synopsis: "Show information about an intention.",
    async run(argv, io) {
      const target = await intentionTarget(argv, io, HELP, deps);
      if (typeof target === "number") return target;
      const { client, id } = target;
      let ixn: IntentionView;
      try {
        ixn = (await client.request("GET", `/v1/connect/intentions/${encodeURIComponent(id)}`)).json() as IntentionView;
      } catch (err) {
        io.err(`Error reading the intention: ${(err as Error).message}\n`);
        return 1;
      }
      const rows: string[][] = [
        ["Source:", sourceString(ixn)],
        ["Destination:", destinationString(ixn)],
        ["Action:", ixn.Action ?? ""],
        ["ID:", ixn.ID ?? ""],
      ];
      if (ixn.Description) rows.push(["Description:", ixn.Description]);
      const meta = ixn.Meta ?? {};
      for (const k of Object.keys(meta).sort()) rows.push([`Meta[${k}]:`, meta[k]!]);
      rows.push(["Created At:", rfc850Utc(ixn.CreatedAt ?? "")]);
      io.out(`${columnizeRows(rows)}\n`);
      return 0;
    },
  };
}
