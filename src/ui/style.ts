/**
 * The UI's one stylesheet's base: system fonts, light and dark themes from prefers-color-scheme or the
 * reader's setting (html data-theme; AA contrast in both), a visible focus ring, health shown as text with a symbol (never colour alone).
 */
export const UI_CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#4a5260;--line:#d0d7de;--accent:#0b57d0;--head:#f3f5f7;
--ok:#116329;--warn:#7a4d00;--crit:#b3261e}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#0f1216;--fg:#e6e9ed;--muted:#aab2bd;--line:#39414b;--accent:#8ab4f8;--head:#1a1f26;
--ok:#6fdd8b;--warn:#f2c14e;--crit:#ff8a80}}
:root[data-theme=dark]{color-scheme:dark;--bg:#0f1216;--fg:#e6e9ed;--muted:#aab2bd;--line:#39414b;--accent:#8ab4f8;--head:#1a1f26;
--ok:#6fdd8b;--warn:#f2c14e;--crit:#ff8a80}
:root[data-theme=light]{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--bg);padding:.5em}
.skip:focus{left:.5em}
header{display:flex;flex-wrap:wrap;gap:1em;align-items:center;padding:.6em 1em;border-bottom:1px solid var(--line);background:var(--head)}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}
nav ul{list-style:none;display:flex;gap:1em;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700}
nav.dcs details{position:relative}nav.dcs summary{cursor:pointer;padding:.2em .4em;border:1px solid var(--line);border-radius:4px}
nav.dcs ul{position:absolute;z-index:2;flex-direction:column;gap:.1em;margin-top:.3em;padding:.4em;min-width:9em;background:var(--bg);border:1px solid var(--line);border-radius:4px}
nav.dcs a{display:block;padding:.2em .4em}
main{padding:1em;max-width:80em}
h1{font-size:1.4em;margin:.2em 0 .6em}
form.filters{display:flex;flex-wrap:wrap;gap:.8em;align-items:end;margin-bottom:1em}
form.filters label{display:flex;flex-direction:column;font-size:.9em;color:var(--muted)}
input,select,button{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);padding:.3em .5em;border-radius:4px}
table{border-collapse:collapse;width:100%}
caption{text-align:left;font-weight:600;padding:.4em 0;color:var(--muted)}
th,td{text-align:left;padding:.4em .6em;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--head)}
.health-passing{color:var(--ok)}.health-warning{color:var(--warn)}.health-critical{color:var(--crit)}
.tags{color:var(--muted);font-size:.9em}
ul.checks{margin:0;padding-left:1.1em}
.pager{display:flex;gap:1em;margin-top:1em}
.live{margin-left:auto;color:var(--muted);font-size:.9em}
nav.tabs{border-bottom:1px solid var(--line);margin:.6em 0 1em}nav.tabs ul{gap:0}nav.tabs a{display:block;padding:.4em .8em;text-decoration:none}
nav.tabs a[aria-current=page]{border-bottom:3px solid var(--accent)}
`;
