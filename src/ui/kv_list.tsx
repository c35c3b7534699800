/** @jsxImportSource hono/jsx */
/**
 * A Key/Value folder's page (Consul's /ui/:dc/kv/<folder>): breadcrumbs to every enclosing folder,
 * the folder's sub-folders and keys (links to their listing or editor), and the folder's actions:
 * create, export as JSON, delete recursively. The table is the page's live fragment. Pure.
 */
import { Layout, type PageFrame } from "./layout.tsx";
import { counted } from "./list_parts.tsx";
import { breadcrumbs, kvHref, type FolderItem } from "./kv_paths.ts";

/** The folders from the root down to `folder` as a breadcrumb trail; the last one is the current page. */
export function Breadcrumbs(props: { readonly base: string; readonly dc: string; readonly folder: string; readonly current: boolean }) {
  const { base, dc, folder, current } = props;
  const crumbs = breadcrumbs(folder);
  return (
    <nav aria-label="Breadcrumb" class="crumbs">
      <ol>
        {crumbs.map((c, i) => (
          <li><a href={kvHref(base, dc, { kind: "folder", folder: c.folder })} aria-current={current && i === crumbs.length - 1 ? "page" : undefined}>{c.name}</a></li>
        ))}
      </ol>
    </nav>
  );
}

/** What a folder's title says: "Key/Value" for the root, else the folder's path. */
export const folderTitle = (folder: string): string => folder === "" ? "Key/Value" : folder;

export function KvListLive(props: { readonly base: string; readonly dc: string; readonly folder: string; readonly items: readonly FolderItem[]; readonly exists: boolean }) {
  const { base, dc, folder, items, exists } = props;
  const folders = items.filter((i) => i.isFolder).length;
  return (
    <div id="kv-live">
      <p id="live-counts">{`${counted(folders, "folder")}, ${counted(items.length - folders, "key")}`}</p>
      <table id="kv-items">
        <caption>{`${folder === "" ? "Top-level keys" : `Keys in ${folder}`} (${dc})`}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Kind</th></tr></thead>
        <tbody>
          {items.map((i) => (
            <tr data-kv={i.path}>
              <th scope="row"><a href={kvHref(base, dc, i.isFolder ? { kind: "folder", folder: i.path } : { kind: "edit", key: i.path })}>{i.name}</a></th>
              <td>{i.isFolder ? "folder" : "key"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {items.length === 0 ? <p>{exists || folder === "" ? "This folder is empty." : `There is nothing under ${folder} yet.`}</p> : null}
    </div>
  );
}

export function KvListPage(props: { readonly frame: PageFrame; readonly folder: string; readonly items: readonly FolderItem[]; readonly exists: boolean; readonly index: number; readonly liveUrl: string }) {
  const { frame, folder, items, exists, index, liveUrl } = props;
  const { base, dc } = frame;
  return (
    <Layout {...frame} section="kv" title={folderTitle(folder)} live={{ url: liveUrl, index }}>
      <Breadcrumbs base={base} dc={dc} folder={folder} current={true} />
      <ul class="kv-actions">
        <li><a href={kvHref(base, dc, { kind: "create", folder })}>{folder === "" ? "Create a key or folder" : `Create a key or folder in ${folder}`}</a></li>
        <li><a href={kvHref(base, dc, { kind: "export", folder })} download>{folder === "" ? "Export all keys as JSON" : `Export ${folder} as JSON`}</a></li>
        {folder !== "" ? <li><a href={kvHref(base, dc, { kind: "delete", folder })}>{`Delete ${folder} and everything in it…`}</a></li> : null}
      </ul>
      <KvListLive base={base} dc={dc} folder={folder} items={items} exists={exists} />
      <p><a href={kvHref(base, dc, { kind: "folder", folder })}>Refresh</a></p>
    </Layout>
  );
}
