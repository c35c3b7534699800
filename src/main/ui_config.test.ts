import { describe, expect, test } from "bun:test";
import { buildConfig, DEFAULT_UI, defaultConfig, DEV_SOURCE, parseConfigJson } from "./config.ts";
import { loadAgentConfig } from "./commands/agent.ts";

const build = (...docs: unknown[]) => buildConfig({ ...defaultConfig("h"), dataDir: "/d" }, docs.map((d, i) => parseConfigJson(`f${i}.json`, d)));

describe("ui_config", () => {
  test("off by default, on in -dev and with -ui; ui_config and the older keys", () => {
    expect(build().ui).toEqual(DEFAULT_UI);
    expect(buildConfig(defaultConfig("h"), [DEV_SOURCE]).ui).toEqual({ enabled: true, contentPath: "/ui/" });
    expect(loadAgentConfig(["-dev"]).config!.ui.enabled).toBe(true);
    expect(loadAgentConfig(["-data-dir", "/d", "-ui"]).config!.ui.enabled).toBe(true);
    expect(build({ ui_config: { enabled: true, content_path: "/consul/ui/" } }).ui).toEqual({ enabled: true, contentPath: "/consul/ui/" });
    expect(build({ ui: true, ui_content_path: "/x/" }).ui).toEqual({ enabled: true, contentPath: "/x/" });
    expect(build({ ui_config: { enabled: true } }, { ui_config: { content_path: "/y" } }).ui).toEqual({ enabled: true, contentPath: "/y" });
  });

  test("bad values name the key", () => {
    expect(() => build({ ui_config: { enabled: "yes" } })).toThrow("f0.json: ui_config.enabled must be true or false");
    expect(() => build({ ui_config: { metrics_provider: "prometheus" } })).toThrow("invalid config key ui_config.metrics_provider");
    expect(() => build({ ui_config: { content_path: "/a b/" } })).toThrow('ui_config.content_path "/a b/" is not a URL path');
  });
});
