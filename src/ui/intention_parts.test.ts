/** The intentions pages' pure parts: filters, the form's validation and the bodies it sends, tag counts, API errors in words. */
import { describe, expect, test } from "bun:test";
import type { ServiceNode } from "../model/index.ts";
import { ixn } from "./intention_fixtures.test.ts";
import { errorWords, prefilled } from "./intention_editor_routes.tsx";
import { listedNames } from "./intention_form.tsx";
import {
  EMPTY_FORM, filterIntentions, formOf, formOfIntention, intentionBody, intentionsOfService, intentionsQueryString, intentionTitle, parseIntentionsQuery, validateForm,
} from "./intention_parts.tsx";
import { ApiError } from "./page.ts";
import { tagCounts } from "./service_tags_page.tsx";


const ALL = [
  ixn("1", "web", "db", "allow", { Description: "orders read the ledger" }),
  ixn("2", "api", "web", "deny"),
  ixn("3", "*", "db", "deny", { Precedence: 8 }),
];

describe("intentions: list filters", () => {
  test("text matches source, destination or description (case-insensitive); action filters; the API's order is kept", () => {
    const q = (s: string, action = "") => filterIntentions(ALL, parseIntentionsQuery((k) => ({ s, action })[k])).map((x) => x.ID);
    expect(q("")).toEqual(["1", "2", "3"]);
    expect(q("WEB")).toEqual(["1", "2"]);
    expect(q("ledger")).toEqual(["1"]);
    expect(q("", "deny")).toEqual(["2", "3"]);
    expect(q("db", "deny")).toEqual(["3"]);
    expect(q("", "maybe")).toEqual(["1", "2", "3"]); // an unknown action is no filter
  });

  test("query strings leave out empty values; page numbers fall back to 1", () => {
    expect(intentionsQueryString(parseIntentionsQuery((k) => ({ s: "a b", action: "allow", page: "2" })[k]))).toBe("s=a+b&action=allow&page=2");
    expect(intentionsQueryString(parseIntentionsQuery((k) => ({ page: "-1" })[k]))).toBe("");
  });

  test("a service's intentions: by source or destination name, case-insensitive", () => {
    expect(intentionsOfService(ALL, "web").map((x) => x.ID)).toEqual(["1", "2"]);
    expect(intentionsOfService(ALL, "DB").map((x) => x.ID)).toEqual(["1", "3"]);
    expect(intentionTitle(ALL[2]!)).toBe("* (any service) → db");
  });
});

describe("intentions: the editor's form", () => {
  const form = (o: Record<string, string>) => formOf({ ...EMPTY_FORM, ...o });

  test("a typed name wins over the picked one; the fields come out trimmed", () => {
    expect(validateForm(form({ source: "web", destination: "db", destinationOther: " billing ", action: "deny", description: " why " })))
      .toEqual({ SourceName: "web", DestinationName: "billing", Action: "deny", Description: "why" });
    expect(validateForm(form({ source: "*", destination: "db", action: "allow" }))).toMatchObject({ SourceName: "*" });
  });

  test("each bad field is named", () => {
    expect(validateForm(form({ destination: "db", action: "allow" }))).toEqual({ field: "source", message: "Source: choose a service, or type a name." });
    expect(validateForm(form({ source: "web", action: "allow" }))).toMatchObject({ field: "destination" });
    expect(validateForm(form({ source: "web", destinationOther: "a/b", action: "allow" }))).toMatchObject({ field: "destination", message: expect.stringContaining("no spaces or slashes") });
    expect(validateForm(form({ source: "web", destination: "db", action: "maybe" }))).toEqual({ field: "action", message: 'Action: choose allow or deny (got "maybe").' });
    expect(validateForm(form({ source: "web", destination: "db", action: "allow", description: "x".repeat(5000) }))).toMatchObject({ field: "description" });
    // Anything that is not a string (a file upload) reads as empty.
    expect(formOf({ source: new Blob(["x"]) }).source).toBe("");
  });

  test("a create sends the four fields; an edit keeps the stored namespaces, source type and meta (a PUT replaces everything)", () => {
    const fields = { SourceName: "web", DestinationName: "db", Action: "deny" as const, Description: "d" };
    expect(JSON.parse(intentionBody(fields))).toEqual(fields);
    const stored = ixn("1", "old", "older", "allow", { Meta: { team: "a" }, SourceNS: "default" });
    expect(JSON.parse(intentionBody(fields, stored))).toEqual({
      SourceNS: "default", SourceName: "web", DestinationNS: "default", DestinationName: "db", SourceType: "consul", Action: "deny", Description: "d", Meta: { team: "a" },
    });
  });

  test("the editor opens on a stored intention: listed names picked, others typed, its ModifyIndex kept", () => {
    const f = formOfIntention(ixn("1", "web", "legacy", "deny", { ModifyIndex: 42, Description: "x" }), new Set(["web", "db"]));
    expect(f).toEqual({ source: "web", sourceOther: "", destination: "", destinationOther: "legacy", action: "deny", description: "x", modifyIndex: "42" });
    const choices = [{ dc: "dc1", services: ["web"] }, { dc: "dc2", services: ["db", "web"] }];
    expect([...listedNames(choices)].sort()).toEqual(["db", "web"]);
    expect(prefilled((k) => ({ destination: "db", source: "ghost" })[k], listedNames(choices))).toMatchObject({ destination: "db", source: "", sourceOther: "ghost" });
  });
});

describe("intentions: API refusals in words", () => {
  test("go-multierror lists become their items; a 403 says the token may not", () => {
    expect(errorWords(new ApiError(400, "1 error occurred:\n\t* SourceName must be set\n\n"))).toBe("The agent refused: SourceName must be set.");
    expect(errorWords(new ApiError(400, "duplicate intention found: web => db (allow)"))).toBe("The agent refused: duplicate intention found: web => db (allow).");
    expect(errorWords(new ApiError(403, "Permission denied"))).toBe("Your token may not do this (Permission denied).");
  });
});

describe("a service's tags", () => {
  test("each tag once, with how many instances carry it, in byte order", () => {
    const node = (tags: string[] | null) => ({ ServiceTags: tags }) as Pick<ServiceNode, "ServiceTags">;
    expect(tagCounts([node(["v2", "primary"]), node(["v2", "v2"]), node(null), node(["Canary"])])).toEqual([
      { tag: "Canary", instances: 1 }, { tag: "primary", instances: 1 }, { tag: "v2", instances: 2 },
    ]);
  });
});
