/** Intention.Validate's messages, one row per rule, and the go-multierror text Apply returns. */
import { describe, expect, test } from "bun:test";
import { formatMultiError, IntentionError, prepareIntentionCreate, validateIntention, type IntentionBody, type ValidatedFields } from "./index.ts";

const VALID: ValidatedFields = {
  Description: "",
  SourceNS: "default",
  SourceName: "web",
  DestinationNS: "default",
  DestinationName: "db",
  SourceType: "consul",
  Action: "allow",
  Meta: null,
};

const meta = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

const ROWS: readonly (readonly [string, Partial<ValidatedFields>, readonly string[]])[] = [
  ["valid exact/exact", {}, []],
  ["valid wildcard name", { SourceName: "*", DestinationName: "*" }, []],
  ["valid wildcard namespace and name", { SourceNS: "*", SourceName: "*", DestinationNS: "*", DestinationName: "*" }, []],
  ["empty SourceNS", { SourceNS: "" }, ["SourceNS must be set"]],
  ["empty SourceName", { SourceName: "" }, ["SourceName must be set"]],
  ["empty DestinationNS", { DestinationNS: "" }, ["DestinationNS must be set"]],
  ["empty DestinationName", { DestinationName: "" }, ["DestinationName must be set"]],
  ["partial SourceNS", { SourceNS: "def*" }, ["SourceNS: wildcard character '*' cannot be used with partial values"]],
  ["partial SourceName", { SourceName: "we*" }, ["SourceName: wildcard character '*' cannot be used with partial values"]],
  ["partial DestinationNS", { DestinationNS: "*x" }, ["DestinationNS: wildcard character '*' cannot be used with partial values"]],
  ["partial DestinationName", { DestinationName: "d*b" }, ["DestinationName: wildcard character '*' cannot be used with partial values"]],
  ["exact source name under wildcard namespace", { SourceNS: "*" }, ["SourceName: exact value cannot follow wildcard namespace"]],
  ["exact destination name under wildcard namespace", { DestinationNS: "*" }, ["DestinationName: exact value cannot follow wildcard namespace"]],
  [
    "partial name under wildcard namespace: both errors",
    { SourceNS: "*", SourceName: "w*" },
    ["SourceName: wildcard character '*' cannot be used with partial values", "SourceName: exact value cannot follow wildcard namespace"],
  ],
  ["Description of 512 bytes", { Description: "x".repeat(512) }, []],
  ["Description of 513 bytes", { Description: "x".repeat(513) }, ["Description exceeds maximum length 512"]],
  ["Description counted in UTF-8 bytes", { Description: "é".repeat(257) }, ["Description exceeds maximum length 512"]],
  ["64 Meta pairs", { Meta: meta(64) }, []],
  ["65 Meta pairs", { Meta: meta(65) }, ["Meta exceeds maximum element count 64"]],
  ["Meta key of 129 bytes", { Meta: { ["k".repeat(129)]: "v" } }, [`Meta key "${"k".repeat(129)}" exceeds maximum length 128`]],
  ["Meta value of 513 bytes", { Meta: { a: "v".repeat(513) } }, ['Meta value for key "a" exceeds maximum length 512']],
  ["Meta keys reported in sorted order", { Meta: { b: "v".repeat(513), a: "v".repeat(513) } }, [
    'Meta value for key "a" exceeds maximum length 512',
    'Meta value for key "b" exceeds maximum length 512',
  ]],
  ["empty Action", { Action: "" }, ["Action must be set to 'allow' or 'deny'"]],
  ["Action is case-sensitive", { Action: "ALLOW" }, ["Action must be set to 'allow' or 'deny'"]],
  ["other SourceType", { SourceType: "external" }, ["SourceType must be set to 'consul'"]],
];

describe("validateIntention", () => {
  test.each(ROWS)("%s", (_, patch, want) => {
    expect(validateIntention({ ...VALID, ...patch })).toEqual([...want]);
  });

  test("reports every problem at once, in Consul's order", () => {
    expect(validateIntention({ ...VALID, SourceName: "", DestinationNS: "*", Action: "maybe", SourceType: "x" })).toEqual([
      "SourceName must be set",
      "DestinationName: exact value cannot follow wildcard namespace",
      "Action must be set to 'allow' or 'deny'",
      "SourceType must be set to 'consul'",
    ]);
  });
});

describe("formatMultiError", () => {
  test("one error", () => {
    expect(formatMultiError(["SourceName must be set"])).toBe("1 error occurred:\n\t* SourceName must be set\n\n");
  });
  test("several errors", () => {
    expect(formatMultiError(["a", "b"])).toBe("2 errors occurred:\n\t* a\n\t* b\n\n");
  });
});

describe("through prepareIntentionCreate (defaults applied first)", () => {
  const create = (body: IntentionBody) => prepareIntentionCreate(body, "id-1", { nowMs: 0 });
  const failure = (body: IntentionBody): IntentionError => {
    try {
      create(body);
    } catch (e) {
      expect(e).toBeInstanceOf(IntentionError);
      return e as IntentionError;
    }
    throw new Error("expected a rejection");
  };

  test("an empty body: names and action are missing, namespaces and SourceType are defaulted", () => {
    const e = failure({});
    expect(e.code).toBe("invalid");
    expect(e.message).toBe(
      "3 errors occurred:\n\t* SourceName must be set\n\t* DestinationName must be set\n\t* Action must be set to 'allow' or 'deny'\n\n",
    );
  });

  test("a bad SourceType is not defaulted away", () => {
    expect(failure({ SourceName: "web", DestinationName: "db", Action: "allow", SourceType: "nomad" }).message).toBe(
      "1 error occurred:\n\t* SourceType must be set to 'consul'\n\n",
    );
  });
});
