/** @jsxImportSource hono/jsx */
/**
 * The page frame every UI page shares: title "Page – DC – Causeway", a skip link as the first Tab
 * stop, header with the datacenter switcher and the main navigation (landmarks), one h1, the
 * stylesheet and the client module (pages work without it).
 */
import type { Child } from "hono/jsx";
import { LIVE, STYLE } from "./assets.ts";

export interface Frame {
  /** The UI's base path with a trailing slash ("/ui/"): every link starts with it. */
  readonly base: string;
  readonly dc: string;
  readonly datacenters: readonly string[];
  /** Which main section the page belongs to. */
  readonly section: "services" | "nodes";
  readonly title: string;
}

/** The sections served so far (key/value, intentions, ACLs and the federation map come next). */
const SECTIONS = [["services", "Services"], ["nodes", "Nodes"]] as const;

/**
 * `live`: the page's live stream (its event-stream URL and the index the page was rendered at); the
 * client module connects to it and marks the body `data-live="on"` once connected.
 */
export function Layout(props: Frame & { readonly live?: { readonly url: string; readonly index: number }; readonly children?: Child }) {
  const { base, dc, datacenters, section, title, live } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} – ${dc} – Causeway`}</title>
        <link rel="stylesheet" href={`${base}assets/${STYLE.name}`} />
        <script type="module" src={`${base}assets/${LIVE.name}`}></script>
      </head>
      <body data-live-url={live?.url} data-live-index={live ? String(live.index) : undefined}>
        <a class="skip" href="#content">Skip to content</a>
        <header>
          <a class="brand" href={`${base}${dc}/services`}>Causeway</a>
          <nav aria-label="Datacenters">
            <ul>
              {datacenters.map((d) => (
                <li><a href={`${base}${d}/${section}`} aria-current={d === dc ? "page" : undefined}>{d}</a></li>
              ))}
            </ul>
          </nav>
          <nav aria-label="Main">
            <ul>
              {SECTIONS.map(([id, label]) => (
                <li><a href={`${base}${dc}/${id}`} aria-current={id === section ? "page" : undefined}>{label}</a></li>
              ))}
            </ul>
          </nav>
        </header>
        <main id="content">
          <h1>{title}</h1>
          {live ? <p class="live" id="live-status" role="status" aria-live="polite">Not live: reload to see changes.</p> : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}
