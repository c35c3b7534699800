/** @jsxImportSource hono/jsx */
/**
 * The reader's settings (Consul's /ui/settings): theme (system, light or dark) and live updates on or
 * off, kept in two long-lived cookies so that the server renders every page with them (no script
 * needed, and no flash of the wrong theme). A plain form: works without JavaScript.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { Layout, type PageFrame, type Preferences, type Theme } from "./layout.tsx";
import type { UiPageModule } from "./page.ts";

export const THEME_COOKIE = "causeway-theme";
export const LIVE_COOKIE = "causeway-live";
const YEAR_S = 365 * 24 * 3600;

export function parseTheme(v: string | undefined): Theme {
  return v === "light" || v === "dark" ? v : "system";
}

/** The reader's preferences from the request's cookies: system theme and live updates by default. */
export function preferencesOf(c: Context): Preferences {
  return { theme: parseTheme(getCookie(c, THEME_COOKIE)), liveUpdates: getCookie(c, LIVE_COOKIE) !== "off" };
}

const THEMES: readonly (readonly [Theme, string])[] = [["system", "As the system (light or dark)"], ["light", "Light"], ["dark", "Dark"]];

export function SettingsPage(props: { readonly frame: PageFrame; readonly saved: boolean }) {
  const { frame, saved } = props;
  return (
    <Layout {...frame} section="settings" title="Settings">
      {saved ? <p role="status" id="saved">Saved. Every page now uses these settings.</p> : null}
      <form method="post" action={`${frame.base}settings`} class="settings">
        <fieldset>
          <legend>Theme</legend>
          {THEMES.map(([v, label]) => (
            <label><input type="radio" name="theme" value={v} checked={frame.theme === v} /> {label}</label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Live updates</legend>
          <label><input type="radio" name="live" value="on" checked={frame.liveUpdates} /> On: pages update as the cluster changes</label>
          <label><input type="radio" name="live" value="off" checked={!frame.liveUpdates} /> Off: pages change only when reloaded</label>
        </fieldset>
        <button type="submit">Save settings</button>
      </form>
    </Layout>
  );
}

export const settingsPages: UiPageModule = {
  routes(app, ctx) {
    const path = `${ctx.base}settings`;
    app.get(path, async (c) => ctx.html(c, <SettingsPage frame={await ctx.frame(c, ctx.deps.datacenter)} saved={c.req.query("saved") === "1"} />));
    app.post(path, async (c) => {
      const form = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
      const theme = String(form["theme"] ?? "system");
      const live = String(form["live"] ?? "on");
      if (parseTheme(theme) !== theme || (live !== "on" && live !== "off")) {
        return c.text(`invalid settings: theme must be system, light or dark (got ${JSON.stringify(theme)}); live must be on or off (got ${JSON.stringify(live)})`, 400);
      }
      const cookie = ctx.cookie(c, YEAR_S);
      setCookie(c, THEME_COOKIE, theme, cookie);
      setCookie(c, LIVE_COOKIE, live, cookie);
      return c.redirect(`${path}?saved=1`, 303);
    });
  },
  css: `fieldset{border:1px solid var(--line);border-radius:4px;margin:0 0 1em;padding:.6em 1em}fieldset label{display:block;padding:.2em 0}`,
};
