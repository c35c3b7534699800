/** @jsxImportSource hono/jsx */
/**
 * The Key/Value delete confirmations: plain pages (no script needed) saying what will be deleted, with
 * a form that posts the delete. A folder's lists the keys a recursive delete removes; a key's carries
 * the ModifyIndex its editor was opened at (the delete uses ?cas=). Pure.
 */
import { Layout, type PageFrame } from "./layout.tsx";
import { counted } from "./list_parts.tsx";
import { Breadcrumbs } from "./kv_list.tsx";
import { kvHref, parentFolder, type KvEntry } from "./kv_paths.ts";

/** How many of a folder's keys the confirmation names; the rest are counted. */
export const LISTED_KEYS = 100;

export function KvDeleteFolderPage(props: { readonly frame: PageFrame; readonly folder: string; readonly entries: readonly KvEntry[] }) {
  const { frame, folder, entries } = props;
  const { base, dc } = frame;
  const listed = entries.slice(0, LISTED_KEYS);
  return (
    <Layout {...frame} section="kv" title={`Delete ${folder}?`}>
      <Breadcrumbs base={base} dc={dc} folder={folder} current={false} />
      <p id="kv-delete-summary">{entries.length === 0
        ? `There are no keys under ${folder} in ${dc}.`
        : `Deleting ${folder} removes ${counted(entries.length, "key")} in ${dc}, the folder's own key included, and cannot be undone:`}</p>
      {listed.length > 0 ? <ul id="kv-doomed">{listed.map((e) => <li>{e.Key}</li>)}</ul> : null}
      {entries.length > listed.length ? <p>{`and ${entries.length - listed.length} more.`}</p> : null}
      <form method="post" action={kvHref(base, dc, { kind: "delete", folder })} class="kv-confirm">
        <button type="submit" class="danger">{`Delete ${folder} and ${counted(entries.length, "key")}`}</button>
        <a href={kvHref(base, dc, { kind: "folder", folder })}>Cancel</a>
      </form>
    </Layout>
  );
}

/** A key's delete confirmation; `message` says why the page came back (the key changed meanwhile). */
export function KvDeleteKeyPage(props: { readonly frame: PageFrame; readonly keyName: string; readonly entry: KvEntry | null; readonly cas: number; readonly message?: string | undefined }) {
  const { frame, keyName, entry, cas, message } = props;
  const { base, dc } = frame;
  return (
    <Layout {...frame} section="kv" title={`Delete ${keyName}?`}>
      <Breadcrumbs base={base} dc={dc} folder={parentFolder(keyName)} current={false} />
      {message ? <p role="alert" id="kv-conflict">{message}</p> : null}
      {entry ? (
        <form method="post" action={kvHref(base, dc, { kind: "delete-key", key: keyName })} class="kv-confirm">
          <p>{`Delete the key ${keyName} (index ${cas}) from ${dc}? This cannot be undone.`}</p>
          <input type="hidden" name="cas" value={String(cas)} />
          <button type="submit" class="danger">Delete key</button>
          <a href={kvHref(base, dc, { kind: "edit", key: keyName })}>Cancel</a>
        </form>
      ) : <p>{`There is no key ${keyName} in ${dc}.`} <a href={kvHref(base, dc, { kind: "folder", folder: parentFolder(keyName) })}>Back to the folder</a></p>}
    </Layout>
  );
}
