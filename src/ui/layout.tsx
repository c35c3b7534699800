/** @jsxImportSource hono/jsx */
/**
 * The page frame every UI page shares: title "Page – DC – Causeway", a skip link as the first Tab
 * stop, header with the datacenter switcher (a disclosure menu) and the main navigation (landmarks), one h1, the
 * stylesheet and the client module (pages work without it), the reader's theme and live preference.
 */
import type { Child } from "hono/jsx";

export type Theme = "system" | "light" | "dark";

/** The reader's settings (cookies set on the settings page). */
export interface Preferences {
  readonly theme: Theme;
  /** False: pages do not open their live stream (they keep a Refresh link). */
  readonly liveUpdates: boolean;
}

/** Everything of the frame but the page's own section and title. */
export interface PageFrame extends Preferences {
  /** The UI's base path with a trailing slash ("/ui/"): every link starts with it. */
  readonly base: string;
  readonly dc: string;
  readonly datacenters: readonly string[];
  /** The hashed names of the stylesheet and the client module. */
  readonly assets: { readonly style: string; readonly client: string };
}

export type Section = "services" | "nodes" | "kv" | "intentions" | "acls" | "federation" | "settings";

export interface Frame extends PageFrame {
  /** Which main section the page belongs to. */
  readonly section: Section;
  readonly title: string;
}

/** The main navigation; federation and settings are not per datacenter. */
const SECTIONS: readonly (readonly [Section, string, boolean])[] = [
  ["services", "Services", true], ["nodes", "Nodes", true], ["kv", "Key/Value", true], ["intentions", "Intentions", true],
  ["acls", "Access Controls", true], ["federation", "Federation", false], ["settings", "Settings", false],
];

function isPerDatacenter(section: Section): boolean {
  return SECTIONS.find(([id]) => id === section)?.[2] ?? true;
}

/** The link of `section` in `dc`. */
export function sectionHref(base: string, dc: string, section: Section): string {
  const perDc = isPerDatacenter(section);
  // The key/value root is a folder: its URL ends in a slash, as Consul's.
  return perDc ? `${base}${encodeURIComponent(dc)}/${section}${section === "kv" ? "/" : ""}` : `${base}${section}`;
}

/**
 * `live`: the page's live stream (its event-stream URL and the index the page was rendered at); the
 * client module connects to it and marks the body `data-live="on"` once connected. Left out when the
 * reader turned live updates off.
 */
export function Layout(props: Frame & { readonly live?: { readonly url: string; readonly index: number } | undefined; readonly children?: Child }) {
  const { base, dc, datacenters, section, title, theme } = props;
  const stream = props.liveUpdates ? props.live : undefined;
  return (
    <html lang="en" data-theme={theme === "system" ? undefined : theme}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} – ${dc} – Causeway`}</title>
        <link rel="stylesheet" href={`${base}assets/${props.assets.style}`} />
        <script type="module" src={`${base}assets/${props.assets.client}`}></script>
      </head>
      <body data-live-url={stream?.url} data-live-index={stream ? String(stream.index) : undefined}>
        <a class="skip" href="#content">Skip to content</a>
        <header>
          <a class="brand" href={`${base}${encodeURIComponent(dc)}/services`}>Causeway</a>
          <nav aria-label="Datacenters" class="dcs">
            {/* A disclosure: Enter on the summary opens it (no script needed); the client module adds arrows and Esc. */}
            <details>
              <summary>Datacenter <strong>{dc}</strong></summary>
              <ul>
                {datacenters.map((d) => (
                  <li><a href={sectionHref(base, d, isPerDatacenter(section) ? section : "services")} aria-current={d === dc ? "page" : undefined}>{d}</a></li>
                ))}
              </ul>
            </details>
          </nav>
          <nav aria-label="Main">
            <ul>
              {SECTIONS.map(([id, label]) => (
                <li><a href={sectionHref(base, dc, id)} aria-current={id === section ? "page" : undefined}>{label}</a></li>
              ))}
            </ul>
          </nav>
        </header>
        <main id="content">
          <h1>{title}</h1>
          {stream ? <p class="live" id="live-status" role="status" aria-live="polite">Not live: reload to see changes.</p> : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}
