/** Test fixtures of the intentions pages' tests: an intention in the API's wire shape. */
import type { Intention } from "../model/index.ts";

export const ixn = (id: string, source: string, destination: string, action: "allow" | "deny", o: Partial<Intention> = {}): Intention => ({
  ID: id, Description: "", SourceNS: "default", SourceName: source, DestinationNS: "default", DestinationName: destination, SourceType: "consul",
  Action: action, DefaultAddr: "", DefaultPort: 0, Meta: {}, Precedence: 9, CreatedAt: "", UpdatedAt: "", Hash: "", CreateIndex: 1, ModifyIndex: 1, ...o,
});
