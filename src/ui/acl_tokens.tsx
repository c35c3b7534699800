/** @jsxImportSource hono/jsx */
/**
 * ACL tokens (Consul's /ui/:dc/acls/tokens, /:id, /create): the list (AccessorID, never the SecretID;
 * description, policies, roles, local or global), a token's page (its SecretID only behind a "show"
 * control, a <details> that works without JavaScript) and, for a token that may write ACLs, the
 * editor (description, policies and roles as checkboxes; locality at creation only) and the delete
 * form. Writes go through `PUT /v1/acl/token[/:id]` and `DELETE /v1/acl/token/:id` as the reader's token.
 */
import type { Context, Hono } from "hono";
import { ANONYMOUS_TOKEN_ACCESSOR_ID } from "../model/index.ts";
import {
  checkConfirmed, checkTokenForm, formList, formText, scopeOf, shortId, type FormBody, type PolicyView, type RoleView, type TokenForm, type TokenView,
} from "./acl_access.ts";
import { badInput, DeleteForm, FormError, LinkChoices, LinkList, ListFilter, matches, SavedNotice } from "./acl_forms.tsx";
import type { AclSession } from "./acl_session.ts";
import { aclGate, aclHref, AclLayout, AclMessagePage } from "./acl_views.tsx";
import type { PageFrame } from "./layout.tsx";
import type { UiContext } from "./page.ts";

/** What the API shows in place of a SecretID the reader may not see. */
const HIDDEN = "<hidden>";

const identitiesText = (t: TokenView) =>
  [...(t.ServiceIdentities ?? []).map((s) => `service ${s.ServiceName}`), ...(t.NodeIdentities ?? []).map((n) => `node ${n.NodeName} (${n.Datacenter})`)].join(", ");

export function TokensList(props: { readonly frame: PageFrame; readonly session: AclSession; readonly all: readonly TokenView[]; readonly s: string; readonly c: Context }) {
  const { frame, session, all, s } = props;
  const { base, dc } = frame;
  const needle = s.toLowerCase();
  const shown = all.filter((t) => matches(needle, t.AccessorID, t.Description, ...(t.Policies ?? []).map((l) => l.Name), ...(t.Roles ?? []).map((l) => l.Name)));
  return (
    <AclLayout frame={frame} session={session} tab="tokens" title="Tokens">
      <SavedNotice c={props.c} what="token" />
      {session.canWrite ? <p><a class="acl-create" href={aclHref(base, dc, "tokens/create")}>Create a token</a></p> : null}
      <ListFilter action={aclHref(base, dc, "tokens")} value={s} label="Accessor ID, description, policy or role" />
      <table id="acl-tokens">
        <caption>{`Tokens in ${dc}: ${shown.length} of ${all.length}`}</caption>
        <thead>
          <tr><th scope="col">Accessor ID</th><th scope="col">Description</th><th scope="col">Policies</th><th scope="col">Roles</th><th scope="col">Scope</th></tr>
        </thead>
        <tbody>
          {shown.map((t) => (
            <tr data-token={t.AccessorID}>
              <th scope="row">
                <a href={aclHref(base, dc, `tokens/${encodeURIComponent(t.AccessorID)}`)}><code>{t.AccessorID}</code></a>
                {t.AccessorID === session.self?.AccessorID ? " (your token)" : ""}
              </th>
              <td>{t.Description}{t.Legacy ? " (legacy)" : ""}</td>
              <td>
                <LinkList base={base} dc={dc} kind="policies" links={t.Policies} empty={identitiesText(t) ? "" : "none"} />
                {identitiesText(t) ? `${t.Policies?.length ? "; " : ""}${identitiesText(t)}` : ""}
              </td>
              <td><LinkList base={base} dc={dc} kind="roles" links={t.Roles} /></td>
              <td>{scopeOf(t)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length === 0 ? <p>No tokens match.</p> : null}
    </AclLayout>
  );
}

/** The SecretID behind a disclosure control; said in words when the API hid it. */
function Secret(props: { readonly secret: string | undefined }) {
  const { secret } = props;
  if (!secret || secret === HIDDEN) return <>hidden: only a token that may write ACLs sees it</>;
  return (
    <details class="acl-secret">
      <summary>Show the Secret ID</summary>
      <code id="acl-secret-id">{secret}</code>
    </details>
  );
}

export function TokenEditor(props: {
  readonly action: string; readonly values: TokenForm; readonly policies: readonly PolicyView[]; readonly roles: readonly RoleView[];
  readonly creating: boolean; readonly index?: number | undefined; readonly error?: string | undefined;
}) {
  const { values } = props;
  return (
    <form method="post" action={props.action} class="acl-form">
      <FormError message={props.error} />
      <label for="token-description">Description</label>
      <input id="token-description" name="description" value={values.Description} />
      <LinkChoices legend="Policies" name="policies" all={props.policies} selected={values.PolicyIDs} />
      <LinkChoices legend="Roles" name="roles" all={props.roles} selected={values.RoleIDs} />
      {props.creating ? <label><input type="checkbox" name="local" value="on" checked={values.Local} /> Local: valid in this datacenter only</label> : null}
      {props.index !== undefined ? <input type="hidden" name="modify_index" value={String(props.index)} /> : null}
      <button type="submit">{props.creating ? "Create token" : "Save token"}</button>
    </form>
  );
}

interface Choices {
  readonly policies: readonly PolicyView[];
  readonly roles: readonly RoleView[];
}

export function TokenPage(props: {
  readonly frame: PageFrame; readonly session: AclSession; readonly token: TokenView; readonly choices: Choices; readonly c: Context;
  readonly edited?: TokenForm; readonly error?: string; readonly index?: number;
}) {
  const { frame, session, token, choices } = props;
  const { base, dc } = frame;
  const self = aclHref(base, dc, `tokens/${encodeURIComponent(token.AccessorID)}`);
  const yours = token.AccessorID === session.self?.AccessorID;
  const values: TokenForm = props.edited ?? {
    Description: token.Description, PolicyIDs: (token.Policies ?? []).map((l) => l.ID), RoleIDs: (token.Roles ?? []).map((l) => l.ID), Local: token.Local,
  };
  return (
    <AclLayout frame={frame} session={session} tab="tokens" title={`Token ${shortId(token.AccessorID)}`}>
      <SavedNotice c={props.c} what="token" />
      {session.canWrite ? null : <FormError message={props.error} />}
      <dl class="acl-props">
        <dt>Accessor ID</dt><dd><code>{token.AccessorID}</code>{yours ? " (your token)" : ""}</dd>
        <dt>Secret ID</dt><dd><Secret secret={token.SecretID} /></dd>
        <dt>Description</dt><dd>{token.Description || "none"}</dd>
        <dt>Policies</dt><dd><LinkList base={base} dc={dc} kind="policies" links={token.Policies} /></dd>
        <dt>Roles</dt><dd><LinkList base={base} dc={dc} kind="roles" links={token.Roles} /></dd>
        <dt>Identities</dt><dd>{identitiesText(token) || "none"}</dd>
        <dt>Scope</dt><dd>{token.Local ? "local: valid in this datacenter only" : "global: valid in every datacenter"}</dd>
        {token.CreateTime ? <><dt>Created</dt><dd>{token.CreateTime}</dd></> : null}
        {token.AuthMethod ? <><dt>Auth method</dt><dd>{token.AuthMethod}</dd></> : null}
        {token.ExpirationTime ? <><dt>Expires</dt><dd>{token.ExpirationTime}</dd></> : null}
      </dl>
      {session.canWrite ? (
        <section aria-labelledby="acl-edit-token">
          <h2 id="acl-edit-token">Edit this token</h2>
          <TokenEditor action={self} values={values} policies={choices.policies} roles={choices.roles} creating={false} index={props.index ?? token.ModifyIndex} error={props.error} />
        </section>
      ) : null}
      {session.canWrite && !yours && token.AccessorID !== ANONYMOUS_TOKEN_ACCESSOR_ID ? <DeleteForm action={`${self}/delete`} what="token" /> : null}
    </AclLayout>
  );
}

function NewTokenPage(props: { readonly frame: PageFrame; readonly session: AclSession; readonly values: TokenForm; readonly choices: Choices; readonly error?: string | undefined }) {
  const { frame, choices } = props;
  return (
    <AclLayout frame={frame} session={props.session} tab="tokens" title="New token">
      <TokenEditor action={aclHref(frame.base, frame.dc, "tokens/create")} values={props.values} policies={choices.policies} roles={choices.roles} creating error={props.error} />
    </AclLayout>
  );
}

const form = (c: Context) => c.req.parseBody({ all: true }).catch(() => ({}) as FormBody) as Promise<FormBody>;
const valuesOf = (body: FormBody): TokenForm => ({
  Description: formText(body, "description"), PolicyIDs: formList(body, "policies"), RoleIDs: formList(body, "roles"), Local: formText(body, "local") === "on",
});
const links = (ids: readonly string[]) => ids.map((ID) => ({ ID }));

export function tokenRoutes(app: Hono, ctx: UiContext): void {
  const path = `${ctx.base}:dc/acls/tokens`;
  const choicesOf = async (dc: string, session: AclSession): Promise<Choices> => session.canWrite
    ? { policies: (await ctx.read<PolicyView[]>("/v1/acl/policies", dc, session.token)).value, roles: (await ctx.read<RoleView[]>("/v1/acl/roles", dc, session.token)).value }
    : { policies: [], roles: [] };
  const readToken = async (dc: string, session: AclSession, id: string) => (await ctx.read<TokenView>(`/v1/acl/token/${encodeURIComponent(id)}`, dc, session.token)).value;

  app.get(path, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    const all = (await ctx.read<TokenView[]>("/v1/acl/tokens", dc, session.token)).value;
    return ctx.html(c, <TokensList frame={frame} session={session} all={all} s={c.req.query("s") ?? ""} c={c} />);
  }));
  app.get(`${path}/create`, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    if (!session.canWrite) {
      return ctx.html(c, <AclMessagePage frame={frame} session={session} tab="tokens" title="Not allowed" login message="Your token may not create tokens." />, 403);
    }
    return ctx.html(c, <NewTokenPage frame={frame} session={session} values={{ Description: "", PolicyIDs: [], RoleIDs: [], Local: false }} choices={await choicesOf(dc, session)} />);
  }));
  app.post(`${path}/create`, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    const body = await form(c);
    const checked = checkTokenForm(body);
    const again = async (error: string) => ctx.html(c, <NewTokenPage frame={frame} session={session} values={valuesOf(body)} choices={await choicesOf(dc, session)} error={error} />, 400);
    if (!checked.ok) return again(checked.message);
    const v = checked.value;
    try {
      const r = await ctx.call({
        method: "PUT", path: "/v1/acl/token", dc, token: session.token,
        body: JSON.stringify({ Description: v.Description, Policies: links(v.PolicyIDs), Roles: links(v.RoleIDs), Local: v.Local }),
      });
      return c.redirect(aclHref(ctx.base, dc, `tokens/${encodeURIComponent((JSON.parse(r.text) as TokenView).AccessorID)}?saved=1`), 303);
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return again(refused);
    }
  }));
  app.get(`${path}/:id`, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    const token = await readToken(dc, session, c.req.param("id") ?? "");
    return ctx.html(c, <TokenPage frame={frame} session={session} token={token} choices={await choicesOf(dc, session)} c={c} />);
  }));
  app.post(`${path}/:id`, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const body = await form(c);
    const checked = checkTokenForm(body);
    const token = await readToken(dc, session, id);
    const again = async (status: 400 | 409, error: string, index?: number) =>
      ctx.html(c, <TokenPage frame={frame} session={session} token={token} choices={await choicesOf(dc, session)} c={c} edited={valuesOf(body)} error={error} index={index} />, status);
    if (!checked.ok) return again(400, checked.message);
    const opened = Number(formText(body, "modify_index") || "NaN");
    if (Number.isInteger(opened) && opened !== token.ModifyIndex) {
      return again(409, `This token changed since you opened it (index ${opened}→${token.ModifyIndex}). Review it and save again to overwrite.`, token.ModifyIndex);
    }
    const v = checked.value;
    // The form edits the description, policies and roles; locality and identities are sent back unchanged.
    const update = {
      AccessorID: token.AccessorID, Description: v.Description, Policies: links(v.PolicyIDs), Roles: links(v.RoleIDs), Local: token.Local,
      ...(token.ServiceIdentities ? { ServiceIdentities: token.ServiceIdentities } : {}), ...(token.NodeIdentities ? { NodeIdentities: token.NodeIdentities } : {}),
    };
    try {
      await ctx.call({ method: "PUT", path: `/v1/acl/token/${encodeURIComponent(id)}`, dc, token: session.token, body: JSON.stringify(update) });
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return again(400, refused);
    }
    return c.redirect(aclHref(ctx.base, dc, `tokens/${encodeURIComponent(id)}?saved=1`), 303);
  }));
  app.post(`${path}/:id/delete`, (c) => aclGate(ctx, c, "tokens", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const confirmed = checkConfirmed(await form(c));
    if (!confirmed.ok) return ctx.html(c, <AclMessagePage frame={frame} session={session} tab="tokens" title="Not deleted" message={confirmed.message} />, 400);
    await ctx.call({ method: "DELETE", path: `/v1/acl/token/${encodeURIComponent(id)}`, dc, token: session.token });
    return c.redirect(aclHref(ctx.base, dc, `tokens?deleted=${encodeURIComponent(shortId(id))}`), 303);
  }));
}
