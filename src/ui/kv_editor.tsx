/** @jsxImportSource hono/jsx */
/**
 * The Key/Value editor and create form (Consul's /ui/:dc/kv/<key>/edit and /kv/<folder>create). Plain
 * forms that post back to their own URL. The editor carries the ModifyIndex it was opened at (saved
 * with ?cas=), the key's flags, and the line ends of the value; it never refreshes itself: its live
 * fragment (#kv-changed) is only a notice that the key changed. Pure: data in, JSX out.
 */
import { Layout, type PageFrame } from "./layout.tsx";
import { Breadcrumbs } from "./kv_list.tsx";
import { base64Bytes, baseName, kvHref, parentFolder, utf8Text, type KvEntry } from "./kv_paths.ts";

/** The key's value as text, or undefined when it is binary (not valid UTF-8). */
export function entryText(e: KvEntry | null): string | undefined {
  return e ? utf8Text(base64Bytes(e.Value)) : "";
}

/** "binary value, 3 bytes". */
export const binaryLabel = (e: KvEntry): string => `binary value, ${base64Bytes(e.Value).length} bytes`;

/** The change notice: what happened to the key since the editor was opened at index `opened`. Empty when nothing did. */
export function changeNotice(opened: number, current: KvEntry | null, currentIndex: number): string | undefined {
  if (!current) return `This key was deleted since you opened it (index ${opened}→${currentIndex}).`;
  if (current.ModifyIndex === opened) return undefined;
  return `This key changed since you opened it (index ${opened}→${current.ModifyIndex}).`;
}

/** The editor's live fragment: the change notice (as the polite status line's text), never the form. */
export function KvChanged(props: { readonly opened: number; readonly current: KvEntry | null; readonly currentIndex: number }) {
  const notice = changeNotice(props.opened, props.current, props.currentIndex);
  return (
    <div id="kv-changed">
      {notice ? <p id="live-counts" class="notice">{`${notice} Saving will not overwrite it: you will see its current value first.`}</p> : null}
    </div>
  );
}

/** The value's textarea. It starts with a newline: the HTML parser drops one leading newline of a textarea's text. */
function ValueField(props: { readonly text: string; readonly error?: string | undefined }) {
  return (
    <p class="field">
      <label for="kv-value">Value</label>
      <textarea id="kv-value" name="value" rows={12} spellcheck={false} aria-invalid={props.error ? "true" : undefined} aria-describedby={props.error ? "kv-error" : undefined}>{`\n${props.text}`}</textarea>
    </p>
  );
}

function JsonToggle(props: { readonly checked: boolean }) {
  return <p class="field"><input type="checkbox" id="kv-json" name="json" value="on" checked={props.checked} /> <label for="kv-json">Value is JSON (checked when saving)</label></p>;
}

const ErrorLine = (props: { readonly error?: string | undefined }) => props.error ? <p id="kv-error" role="alert" class="error">{props.error}</p> : null;

export interface EditorState {
  /** The textarea's text: the stored value, or what the reader typed when the page comes back with an error. */
  readonly text: string;
  readonly json: boolean;
  /** The ModifyIndex a save must find (0: the key must not exist). */
  readonly cas: number;
  readonly flags: string;
  /** "crlf" when the value's lines end with CRLF (browsers send textarea lines so). */
  readonly eol: "lf" | "crlf";
  readonly error?: string | undefined;
  /** After a refused save: why (the page shows the key as it is now). */
  readonly conflict?: { readonly message: string } | undefined;
  readonly saved?: boolean;
}

/** The index the editor's reader works from: what a save sends as ?cas=, else the key's own. */
export function editorOpenedAt(entry: KvEntry | null, state: EditorState): number {
  return state.cas > 0 || !entry ? state.cas : entry.ModifyIndex;
}

/**
 * The editor of `keyName`. `entry` is the key as it is now (null: deleted since the reader opened it,
 * after a refused save); the notice compares it with `state.cas`, the index the reader works from, and
 * `liveUrl` (the kv-key topic, opened at that index) keeps watching.
 */
export function KvEditPage(props: { readonly frame: PageFrame; readonly keyName: string; readonly entry: KvEntry | null; readonly state: EditorState; readonly liveUrl: string }) {
  const { frame, keyName, entry, state, liveUrl } = props;
  const { base, dc } = frame;
  const text = entryText(entry);
  const folder = parentFolder(keyName);
  const opened = editorOpenedAt(entry, state);
  return (
    <Layout {...frame} section="kv" title={baseName(keyName)} live={entry ? { url: liveUrl, index: opened } : undefined}>
      <Breadcrumbs base={base} dc={dc} folder={folder} current={false} />
      <p class="kv-meta">{entry
        ? `Key ${keyName}: modify index ${entry.ModifyIndex}, created at index ${entry.CreateIndex}, flags ${entry.Flags}${entry.Session ? `, locked by session ${entry.Session}` : ""}.`
        : `Key ${keyName}: deleted.`}</p>
      {state.saved && entry ? <p role="status" id="kv-saved">{`Saved at index ${entry.ModifyIndex}.`}</p> : null}
      {entry ? <KvChanged opened={opened} current={entry} currentIndex={entry.ModifyIndex} /> : null}
      {state.conflict ? (
        <section class="conflict" aria-labelledby="kv-conflict">
          <p id="kv-conflict" role="alert">{`${state.conflict.message} Nothing was written. Your text is still in the editor: save again to ${entry ? "replace the current value with it" : "create the key again with it"}.`}</p>
          {entry ? (
            <>
              <h2>Current value</h2>
              {text === undefined ? <p>{binaryLabel(entry)}</p> : <pre id="kv-current" tabindex={0}>{text}</pre>}
            </>
          ) : null}
        </section>
      ) : null}
      <ErrorLine error={state.error} />
      {text === undefined && !state.conflict ? (
        <p id="kv-binary">{`This key holds a ${binaryLabel(entry!)}: it cannot be edited as text.`}</p>
      ) : (
        <form method="post" action={kvHref(base, dc, { kind: "edit", key: keyName })} class="kv-form">
          <input type="hidden" name="cas" value={String(state.cas)} />
          <input type="hidden" name="flags" value={state.flags} />
          <input type="hidden" name="eol" value={state.eol} />
          <ValueField text={state.text} error={state.error} />
          <JsonToggle checked={state.json} />
          <button type="submit">Save</button>
        </form>
      )}
      <ul class="kv-actions">
        {entry ? <li><a href={`${kvHref(base, dc, { kind: "delete-key", key: keyName })}?cas=${opened}`}>Delete this key…</a></li> : null}
        <li><a href={kvHref(base, dc, { kind: "folder", folder })}>{`Back to ${folder || "the top level"}`}</a></li>
      </ul>
    </Layout>
  );
}

export function KvCreatePage(props: { readonly frame: PageFrame; readonly folder: string; readonly name: string; readonly text: string; readonly json: boolean; readonly error?: string | undefined; readonly existing?: string | undefined }) {
  const { frame, folder, name, text, json, error, existing } = props;
  const { base, dc } = frame;
  const nameError = error?.startsWith("name:");
  return (
    <Layout {...frame} section="kv" title={folder === "" ? "Create a key" : `Create a key in ${folder}`}>
      <Breadcrumbs base={base} dc={dc} folder={folder} current={false} />
      <ErrorLine error={error} />
      {existing ? <p><a href={existing}>Edit the existing key</a></p> : null}
      <form method="post" action={kvHref(base, dc, { kind: "create", folder })} class="kv-form">
        <p class="field">
          <label for="kv-name">{folder === "" ? "Name" : `Name (in ${folder})`}</label>
          <input id="kv-name" name="name" value={name} required autocomplete="off" aria-describedby={nameError ? "kv-name-hint kv-error" : "kv-name-hint"} aria-invalid={nameError ? "true" : undefined} />
          <span id="kv-name-hint" class="hint">End the name with / to create a folder; slashes inside make sub-folders.</span>
        </p>
        <ValueField text={text} error={nameError ? undefined : error} />
        <JsonToggle checked={json} />
        <button type="submit">Create</button>
      </form>
    </Layout>
  );
}
