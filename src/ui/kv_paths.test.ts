import { describe, expect, test } from "bun:test";
import {
  base64Bytes, baseName, breadcrumbs, bytesBase64, encodeKeyPath, exportFileName, exportJson, flagsOf, folderItems, jsonProblem, kvHref,
  looksLikeJson, nameProblem, parentFolder, parseEntries, parseKvPath, submittedText, utf8Text, type KvRoute,
} from "./kv_paths.ts";
import { kvRest } from "./kv_page.tsx";
import { changeNotice } from "./kv_editor.tsx";

describe("Key/Value URLs", () => {
  const rest = (href: string) => href.slice("/ui/dc1/kv/".length);

  test("every page's URL parses back to the same route, for keys that need escaping too", () => {
    const keys = ["a", "app/config", "with space/50%/x?y#z", "café/ünï/日本", "a//b", "/leading", "trailing/"];
    for (const key of keys) {
      const folder = parentFolder(key);
      const routes: KvRoute[] = [
        { kind: "edit", key }, { kind: "delete-key", key }, { kind: "folder", folder },
        { kind: "create", folder }, { kind: "delete", folder }, { kind: "export", folder },
      ];
      for (const r of routes) expect(parseKvPath(rest(kvHref("/ui/", "dc1", r)))).toEqual(r);
    }
  });

  test("URLs look like Consul's", () => {
    expect(kvHref("/ui/", "dc1", { kind: "folder", folder: "" })).toBe("/ui/dc1/kv/");
    expect(kvHref("/ui/", "dc1", { kind: "folder", folder: "app/web/" })).toBe("/ui/dc1/kv/app/web/");
    expect(kvHref("/ui/", "dc1", { kind: "edit", key: "app/web/port" })).toBe("/ui/dc1/kv/app/web/port/edit");
    expect(kvHref("/ui/", "dc1", { kind: "create", folder: "" })).toBe("/ui/dc1/kv/create");
    expect(kvHref("/ui/", "dc1", { kind: "create", folder: "app/" })).toBe("/ui/dc1/kv/app/create");
    expect(kvHref("/c/", "dc 2", { kind: "edit", key: "50% off/ü" })).toBe("/c/dc%202/kv/50%25%20off/%C3%BC/edit");
    expect(encodeKeyPath("a b/c#d")).toBe("a%20b/c%23d");
  });

  test("a folder without its slash redirects; bad escapes and key actions without a key name no page", () => {
    expect(parseKvPath("app")).toEqual({ kind: "bare", folder: "app/" });
    expect(parseKvPath("app/web")).toEqual({ kind: "bare", folder: "app/web/" });
    expect(parseKvPath("%E0%A4%A/edit")).toBeUndefined();
    expect(parseKvPath("edit")).toBeUndefined();
    expect(parseKvPath("/edit")).toBeUndefined();
    expect(parseKvPath("")).toEqual({ kind: "folder", folder: "" });
    expect(parseKvPath("a%2Fb/edit")).toEqual({ kind: "edit", key: "a/b" });
  });

  test("the path after <base><dc>/kv", () => {
    expect(kvRest("/ui/dc1/kv", "/ui/")).toBe("");
    expect(kvRest("/ui/dc1/kv/a/b/", "/ui/")).toBe("/a/b/");
    expect(kvRest("/ui/dc1/nodes", "/ui/")).toBeUndefined();
  });
});

describe("folders and breadcrumbs", () => {
  test("parents, names and the breadcrumb trail", () => {
    expect(parentFolder("a/b/c")).toBe("a/b/");
    expect(parentFolder("a/b/c/")).toBe("a/b/");
    expect(parentFolder("top")).toBe("");
    expect(baseName("a/b/c/")).toBe("c/");
    expect(breadcrumbs("")).toEqual([{ name: "Key/Value", folder: "" }]);
    expect(breadcrumbs("a/b c/")).toEqual([{ name: "Key/Value", folder: "" }, { name: "a", folder: "a/" }, { name: "b c", folder: "a/b c/" }]);
  });

  test("a listing: the folder's own key left out, sub-folders first, names relative", () => {
    expect(folderItems("app/", ["app/", "app/db/", "app/port", "app/web/"])).toEqual([
      { path: "app/db/", name: "db/", isFolder: true }, { path: "app/web/", name: "web/", isFolder: true },
      { path: "app/port", name: "port", isFolder: false },
    ]);
  });

  test("names the create form refuses", () => {
    expect(nameProblem("")).toContain("name:");
    expect(nameProblem("/x")).toContain("must not start with /");
    expect(nameProblem("a/../b")).toContain('"."');
    expect(nameProblem("./")).toContain('"."');
    expect(nameProblem("ok/folder/")).toBeUndefined();
    expect(nameProblem("with space %")).toBeUndefined();
  });
});

describe("values", () => {
  test("UTF-8 text or binary; base64 both ways", () => {
    expect(utf8Text(base64Bytes(btoa("héllo".replace(/é/, "\xc3\xa9"))))).toBe("héllo");
    expect(utf8Text(new Uint8Array([0xff, 0xfe, 0x00]))).toBeUndefined();
    expect(base64Bytes(null)).toEqual(new Uint8Array());
    const bytes = new Uint8Array(70_000).map((_, i) => i % 256);
    expect(base64Bytes(bytesBase64(bytes))).toEqual(bytes);
  });

  test("JSON checks", () => {
    expect(jsonProblem('{"a":1}')).toBeUndefined();
    expect(jsonProblem("{a:1}")).toMatch(/JSON|property|token/i);
    expect(looksLikeJson(' {"a": [1]} ')).toBe(true);
    expect(looksLikeJson("42")).toBe(false);
    expect(looksLikeJson("{nope")).toBe(false);
  });

  test("textarea line ends: CRLF back to LF unless the value had CRLF", () => {
    expect(submittedText("a\r\nb\r\n", "lf")).toBe("a\nb\n");
    expect(submittedText("a\r\nb\nc", "crlf")).toBe("a\r\nb\r\nc");
  });

  test("flags stay exact past 2^53, and the export is consul kv export's format", () => {
    const text = '[{"LockIndex":0,"Key":"a\\"Flags\\":7","Flags":18446744073709551615,"Value":"eA==","CreateIndex":3,"ModifyIndex":4},{"LockIndex":0,"Key":"b/","Flags":0,"Value":null,"CreateIndex":5,"ModifyIndex":5}]';
    expect(flagsOf(text)).toEqual(["18446744073709551615", "0"]);
    const entries = parseEntries(text);
    expect(entries.map((e) => [e.Key, e.Flags])).toEqual([['a"Flags":7', "18446744073709551615"], ["b/", "0"]]);
    expect(exportJson(entries)).toBe('[\n\t{\n\t\t"key": "a\\"Flags\\":7",\n\t\t"flags": 18446744073709551615,\n\t\t"value": "eA=="\n\t},\n\t{\n\t\t"key": "b/",\n\t\t"flags": 0,\n\t\t"value": ""\n\t}\n]\n');
    expect(exportJson([])).toBe("[]\n");
    expect(exportFileName("dc1", "app/web cfg/")).toBe("kv-dc1-app_web_cfg.json");
    expect(exportFileName("dc1", "")).toBe("kv-dc1.json");
  });

  test("the change notice", () => {
    const e = { Key: "k", Flags: "0", Value: null, LockIndex: 0, CreateIndex: 3, ModifyIndex: 9 };
    expect(changeNotice(9, e, 9)).toBeUndefined();
    expect(changeNotice(5, e, 9)).toBe("This key changed since you opened it (index 5→9).");
    expect(changeNotice(5, null, 12)).toBe("This key was deleted since you opened it (index 5→12).");
  });
});
