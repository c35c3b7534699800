/**
 * Auth methods and binding rules as Consul 1.8's CLI shows them: decoded into the api package's structs
 * (api/acl.go ACLAuthMethod, ACLAuthMethodListEntry, ACLBindingRule), which is what `-format=json`
 * marshals back (so fields the 1.8 api lacks are dropped, MaxTokenTTL is written first and as Go's
 * Duration String, and Config's keys come sorted as a Go map's), and the pretty formatters of
 * command/acl/authmethod/formatter.go and command/acl/bindingrule/formatter.go. Every pretty text ends
 * with the newline Consul's UI adds after the formatter's output; an empty list prints nothing.
 */
import { formatGoDuration, parseGoDuration } from "../../../lib/index.ts";
import { marshalIndent } from "./format.ts";

type Raw = Readonly<Record<string, unknown>>;
type Index = number | bigint;

/** api.ACLAuthMethod as decoded (MaxTokenTTL as Go's Duration String, "" for none). */
export interface AuthMethod {
  Name: string;
  Type: string;
  DisplayName: string;
  Description: string;
  MaxTokenTTL: string;
  TokenLocality: string;
  Config: Record<string, unknown> | null;
  CreateIndex: Index;
  ModifyIndex: Index;
}

/** api.ACLBindingRule (its JSON has every field, in this order). */
export interface BindingRule {
  ID: string;
  Description: string;
  AuthMethod: string;
  Selector: string;
  BindType: string;
  BindName: string;
  CreateIndex: Index;
  ModifyIndex: Index;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");
const index = (v: unknown): Index => (typeof v === "number" || typeof v === "bigint" ? v : 0);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A served MaxTokenTTL as api.ACLAuthMethod.UnmarshalJSON reads it and Duration.String prints it ("90m" is "1h30m0s"). */
function ttl(v: unknown): string {
  if (typeof v !== "string" || v === "") return "";
  try {
    const ns = parseGoDuration(v);
    return ns === 0 ? "" : formatGoDuration(ns);
  } catch {
    return v;
  }
}

/** An auth method as served, decoded as the api package decodes it. */
export function decodeAuthMethod(raw: unknown): AuthMethod {
  const m = (isObject(raw) ? raw : {}) as Raw;
  return {
    Name: str(m.Name), Type: str(m.Type), DisplayName: str(m.DisplayName), Description: str(m.Description), MaxTokenTTL: ttl(m.MaxTokenTTL),
    TokenLocality: str(m.TokenLocality), Config: isObject(m.Config) ? m.Config : null, CreateIndex: index(m.CreateIndex), ModifyIndex: index(m.ModifyIndex),
  };
}

/**
 * api.ACLAuthMethod as its MarshalJSON writes it (1.8): MaxTokenTTL first, as a string, left out when
 * zero; DisplayName, Description and TokenLocality omitempty; Config always (null when none), through
 * `config`.
 */
function marshalShape(m: AuthMethod, config: (c: Record<string, unknown> | null) => unknown): Record<string, unknown> {
  return {
    ...(m.MaxTokenTTL ? { MaxTokenTTL: m.MaxTokenTTL } : {}),
    Name: m.Name,
    Type: m.Type,
    ...(m.DisplayName ? { DisplayName: m.DisplayName } : {}),
    ...(m.Description ? { Description: m.Description } : {}),
    ...(m.TokenLocality ? { TokenLocality: m.TokenLocality } : {}),
    Config: config(m.Config),
    CreateIndex: m.CreateIndex,
    ModifyIndex: m.ModifyIndex,
  };
}

/** A JSON value as Go holds it after decoding into interface{}: objects become Maps, which marshal with sorted keys. */
function goValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(goValue);
  return isObject(v) ? new Map(Object.entries(v).map(([k, x]) => [k, goValue(x)])) : v;
}

/** The request body Consul's api client sends for `m` (AuthMethodCreate, AuthMethodUpdate). */
export const authMethodBody = (m: AuthMethod): string => JSON.stringify(marshalShape(m, (c) => c));

/** What -format=json prints of a method. */
export const authMethodOut = (m: AuthMethod): unknown => marshalShape(m, goValue);

/** A list entry as served, as api.ACLAuthMethodListEntry (1.8: no MaxTokenTTL, TokenLocality or Config) marshals it. */
export function authMethodStubOut(raw: unknown): Record<string, unknown> {
  const { Name, Type, DisplayName, Description, CreateIndex, ModifyIndex } = decodeAuthMethod(raw);
  return { Name, Type, ...(DisplayName ? { DisplayName } : {}), ...(Description ? { Description } : {}), CreateIndex, ModifyIndex };
}

/** A binding rule as served, as api.ACLBindingRule decodes and marshals it. */
export function decodeBindingRule(raw: unknown): BindingRule {
  const r = (isObject(raw) ? raw : {}) as Raw;
  return {
    ID: str(r.ID), Description: str(r.Description), AuthMethod: str(r.AuthMethod), Selector: str(r.Selector), BindType: str(r.BindType),
    BindName: str(r.BindName), CreateIndex: index(r.CreateIndex), ModifyIndex: index(r.ModifyIndex),
  };
}

/** Consul's UI line after a formatter's output; an empty output prints nothing at all. */
const shown = (out: string) => (out === "" ? "" : `${out}\n`);

/** FormatAuthMethod: the fields, then "Config:" and the Config as json.MarshalIndent(config, "", "  ") writes it. */
export function formatAuthMethod(m: AuthMethod, showMeta: boolean): string {
  let out = `Name:          ${m.Name}\nType:          ${m.Type}\n`;
  if (m.DisplayName) out += `DisplayName:   ${m.DisplayName}\n`;
  out += `Description:   ${m.Description}\n`;
  if (m.MaxTokenTTL) out += `MaxTokenTTL:   ${m.MaxTokenTTL}\n`;
  if (m.TokenLocality) out += `TokenLocality: ${m.TokenLocality}\n`;
  if (showMeta) out += `Create Index:  ${m.CreateIndex}\nModify Index:  ${m.ModifyIndex}\n`;
  return shown(`${out}Config:\n${marshalIndent(goValue(m.Config), 2)}`);
}

/** FormatAuthMethodList: each entry headed by the method's name, back to back. */
export function formatAuthMethodList(methods: readonly Raw[], showMeta: boolean): string {
  return shown(methods.map((raw) => {
    const m = decodeAuthMethod(raw);
    let out = `${m.Name}:\n   Type:         ${m.Type}\n`;
    if (m.DisplayName) out += `   DisplayName:  ${m.DisplayName}\n`;
    out += `   Description:  ${m.Description}\n`;
    if (showMeta) out += `   Create Index: ${m.CreateIndex}\n   Modify Index: ${m.ModifyIndex}\n`;
    return out;
  }).join(""));
}

/** A rule's lines after its ID, each after `indent`. */
function ruleLines(r: BindingRule, indent: string, showMeta: boolean): string {
  const lines = [`AuthMethod:   ${r.AuthMethod}`, `Description:  ${r.Description}`, `BindType:     ${r.BindType}`, `BindName:     ${r.BindName}`, `Selector:     ${r.Selector}`];
  if (showMeta) lines.push(`Create Index: ${r.CreateIndex}`, `Modify Index: ${r.ModifyIndex}`);
  return lines.map((l) => `${indent}${l}\n`).join("");
}

/** FormatBindingRule. */
export const formatBindingRule = (r: BindingRule, showMeta: boolean): string => shown(`ID:           ${r.ID}\n${ruleLines(r, "", showMeta)}`);

/** FormatBindingRuleList: each entry headed by the rule's ID, back to back. */
export const formatBindingRuleList = (rules: readonly BindingRule[], showMeta: boolean): string =>
  shown(rules.map((r) => `${r.ID}:\n${ruleLines(r, "   ", showMeta)}`).join(""));
