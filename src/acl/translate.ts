/**
 * Consul 1.8's `acl.TranslateLegacyRules` (acl/policy.go), behind `/v1/acl/rules/translate`: legacy
 * rules text in, the same rules in the current syntax out. Every unquoted object key named `agent`,
 * `event`, `key`, `node`, `query`, `service` or `session`, at any depth, becomes its `_prefix` form (a
 * legacy rule was a prefix rule); then the tree is printed with hcl v1's printer (hcl_v1_print.ts):
 * two-space indent, aligned `=`, comments kept, no trailing newline. The rules are not validated
 * (Consul does not either): `foo = "bar"` translates to itself.
 *
 * Input in the JSON form is read as hcl v1 reads JSON (nested objects flattened into multi-key items);
 * its keys are quoted, so, as in Consul, none is renamed. JSON strings are re-quoted as JSON writes them
 * (Consul keeps the original escapes). Syntax errors are reported by hcl.ts's strict parser.
 */
import { parseHcl } from "./hcl.ts";
import { HclError, type HclObject, type HclValue } from "./hcl_source.ts";
import { parseHclV1, type V1File, type V1Item, type V1Node, type V1Pos } from "./hcl_v1_ast.ts";
import { printHclV1 } from "./hcl_v1_print.ts";

/** A text that is not HCL; `message` is `Failed to parse rules: At L:C: <reason>` (Consul answers it 400). */
export class TranslateError extends Error {
  override readonly name = "TranslateError";
}

const RENAMES: ReadonlyMap<string, string> = new Map(["agent", "key", "node", "query", "service", "session", "event"].map((k) => [k, `${k}_prefix`]));

/** The current-syntax form of legacy `rules`; throws TranslateError when the text does not parse. */
export function translateLegacyRules(rules: string): string {
  let generic: HclObject;
  let file: V1File;
  try {
    generic = parseHcl(rules);
    file = /^\s*\{/.test(rules) ? fromJson(generic) : parseHclV1(rules);
  } catch (err) {
    if (err instanceof HclError) throw new TranslateError(`Failed to parse rules: ${err.message}`);
    throw err;
  }
  renameKeys(file.items);
  return printHclV1(file);
}

function renameKeys(items: readonly V1Item[]): void {
  const node = (n: V1Node) => {
    if (n.kind === "object") renameKeys(n.items);
    else if (n.kind === "list") n.list.forEach(node);
  };
  for (const item of items) {
    for (const k of item.keys) {
      const renamed = k.type === "IDENT" ? RENAMES.get(k.text) : undefined;
      if (renamed !== undefined) k.text = renamed;
    }
    node(item.val);
  }
}

/** hcl v1's JSON parser output: every member an item with `=`, then flattenObjects. */
function fromJson(root: HclObject): V1File {
  const pos = (p: { line: number; column: number }): V1Pos => ({ offset: 0, line: p.line, column: p.column });
  const value = (v: HclValue): V1Node => {
    switch (v.kind) {
      case "object":
        return { kind: "object", lbrace: pos(v.pos), rbrace: pos(v.pos), items: flatten(v.items.map(item)) };
      case "list":
        return { kind: "list", lbrack: pos(v.pos), list: v.elements.map(value) };
      case "string":
        return { kind: "literal", token: { type: "STRING", text: JSON.stringify(v.value), pos: pos(v.pos) } };
      case "number":
        return { kind: "literal", token: { type: "NUMBER", text: v.text, pos: pos(v.pos) } };
      case "bool":
        return { kind: "literal", token: { type: "BOOL", text: String(v.value), pos: pos(v.pos) } };
      case "null":
        return { kind: "literal", token: { type: "STRING", text: "", pos: pos(v.pos) } };
    }
  };
  const item = (i: HclObject["items"][number]): V1Item => ({
    keys: i.keys.map((k) => ({ text: JSON.stringify(k.name), type: "STRING", pos: pos(k.pos) })), assign: pos(i.keys[0]!.pos), val: value(i.value),
  });
  return { items: flatten(root.items.map(item)), comments: [] };
}

/** hcl/json/parser flattenObjects for one object list: objects of objects (and lists of objects) become multi-key items. */
function flatten(items: readonly V1Item[]): V1Item[] {
  const out: V1Item[] = [];
  const frontier = [...items];
  while (frontier.length > 0) {
    const it = frontier.pop()!;
    const v = it.val;
    if (v.kind === "object" && v.items.length > 0 && v.items.every((s) => s.val.kind === "object")) {
      for (const s of v.items) frontier.push({ ...it, keys: [...it.keys, ...s.keys], val: s.val });
    } else if (v.kind === "list" && v.list.length > 0 && v.list.every((e) => e.kind === "object")) {
      for (const e of v.list) frontier.push({ ...it, val: e });
    } else out.push(it);
  }
  return out.reverse();
}
