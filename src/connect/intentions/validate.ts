/**
 * Consul 1.8's Intention.Validate (agent/structs/intention.go), message for message, and go-multierror's
 * formatting of the result (format.go ListFormatFunc), which is what Intention.Apply returns.
 */
import { compareGoStrings } from "./precedence.ts";
import {
  INTENTION_META_KEY_MAX_LENGTH,
  INTENTION_META_MAX_PAIRS,
  INTENTION_META_VALUE_MAX_LENGTH,
  INTENTION_WILDCARD,
} from "./types.ts";

/** The fields Validate looks at, after namespace and SourceType defaulting. */
export interface ValidatedFields {
  readonly Description: string;
  readonly SourceNS: string;
  readonly SourceName: string;
  readonly DestinationNS: string;
  readonly DestinationName: string;
  readonly SourceType: string;
  readonly Action: string;
  readonly Meta: Readonly<Record<string, string>> | null;
}

const utf8 = new TextEncoder();
/** Go's len() of a string: UTF-8 bytes. */
const byteLength = (s: string): number => utf8.encode(s).length;

/** Go's %q for a string (strconv.Quote) for the printable and control characters that matter here. */
export function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-7][0-9a-f])/g, "\\x$1").replace(/\u007f/g, "\\x7f");
}

/** The wildcard rules: "*" only as a whole value, and an exact name never under a wildcard namespace. */
function wildcardErrors(side: "Source" | "Destination", ns: string, name: string, out: string[]): void {
  if (ns !== INTENTION_WILDCARD && ns.includes(INTENTION_WILDCARD)) {
    out.push(`${side}NS: wildcard character '*' cannot be used with partial values`);
  }
  if (name !== INTENTION_WILDCARD) {
    if (name.includes(INTENTION_WILDCARD)) out.push(`${side}Name: wildcard character '*' cannot be used with partial values`);
    if (ns === INTENTION_WILDCARD) out.push(`${side}Name: exact value cannot follow wildcard namespace`);
  }
}

/**
 * Every validation error, in Consul's order: empty fields (SourceNS, SourceName, DestinationNS,
 * DestinationName "must be set"), wildcard misuse, Description and Meta limits (64 pairs, keys 128 and
 * values 512 bytes; Description shares the value limit), Action, SourceType. Meta keys are reported in
 * sorted order (Go ranges over the map in random order). An empty array means valid.
 */
export function validateIntention(x: ValidatedFields): string[] {
  const out: string[] = [];
  if (x.SourceNS === "") out.push("SourceNS must be set");
  if (x.SourceName === "") out.push("SourceName must be set");
  if (x.DestinationNS === "") out.push("DestinationNS must be set");
  if (x.DestinationName === "") out.push("DestinationName must be set");
  wildcardErrors("Source", x.SourceNS, x.SourceName, out);
  wildcardErrors("Destination", x.DestinationNS, x.DestinationName, out);
  if (byteLength(x.Description) > INTENTION_META_VALUE_MAX_LENGTH) {
    out.push(`Description exceeds maximum length ${INTENTION_META_VALUE_MAX_LENGTH}`);
  }
  const meta = x.Meta ?? {};
  const keys = Object.keys(meta).sort(compareGoStrings);
  if (keys.length > INTENTION_META_MAX_PAIRS) out.push(`Meta exceeds maximum element count ${INTENTION_META_MAX_PAIRS}`);
  for (const k of keys) {
    if (byteLength(k) > INTENTION_META_KEY_MAX_LENGTH) {
      out.push(`Meta key ${goQuote(k)} exceeds maximum length ${INTENTION_META_KEY_MAX_LENGTH}`);
    }
    if (byteLength(meta[k]!) > INTENTION_META_VALUE_MAX_LENGTH) {
      out.push(`Meta value for key ${goQuote(k)} exceeds maximum length ${INTENTION_META_VALUE_MAX_LENGTH}`);
    }
  }
  if (x.Action !== "allow" && x.Action !== "deny") out.push("Action must be set to 'allow' or 'deny'");
  if (x.SourceType !== "consul") out.push("SourceType must be set to 'consul'");
  return out;
}

/**
 * go-multierror's Error() text: "1 error occurred:\n\t* X\n\n" or "2 errors occurred:\n\t* X\n\t* Y\n\n".
 * Consul's HTTP API sends this text as the response body.
 */
export function formatMultiError(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join("\n\t")}\n\n`;
}
