/** @jsxImportSource hono/jsx */
/**
 * The Access Controls section (Consul's /ui/:dc/acls/...): login and logout, and the tokens, policies
 * and roles pages (acl_tokens.tsx, acl_policies.tsx, acl_roles.tsx). Login: the reader pastes a token's
 * SecretID; it is checked with `GET /v1/acl/token/self` as that token and, once accepted, kept in the
 * HttpOnly, SameSite=Strict `causeway-token` cookie (path: the UI's base) that every page reads with; a
 * refused token is said in words (403) and sets nothing. Logout clears the cookie. With ACLs off every
 * ACL page explains how to turn them on (200). Works without JavaScript: forms post, answers redirect (303).
 */
import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { formText, loginTarget, refusalOf, type FormBody, type TokenView } from "./acl_access.ts";
import { policyRoutes } from "./acl_policies.tsx";
import { roleRoutes } from "./acl_roles.tsx";
import { aclSession, type AclSession } from "./acl_session.ts";
import { tokenRoutes } from "./acl_tokens.tsx";
import { aclHref, AclOffPage, LoginPage } from "./acl_views.tsx";
import { TOKEN_COOKIE, type UiContext, type UiPageModule } from "./page.ts";


/** The login page: the form, and what happened before (logged out, refused). */
async function loginAnswer(ctx: UiContext, c: Context, dc: string, session: AclSession, message: string | undefined, status: 200 | 400 | 403, next: string) {
  const frame = await ctx.frame(c, dc);
  if (session.state === "off") return ctx.html(c, <AclOffPage frame={frame} session={session} />);
  return ctx.html(c, <LoginPage frame={frame} session={session} next={next} message={message} />, status);
}

function loginRoutes(app: Parameters<UiPageModule["routes"]>[0], ctx: UiContext): void {
  const login = `${ctx.base}:dc/acls/login`;
  app.get(`${ctx.base}:dc/acls`, (c) => c.redirect(aclHref(ctx.base, c.req.param("dc") ?? "", "tokens"), 302));
  app.get(login, async (c) => {
    const dc = c.req.param("dc") ?? "";
    let session: AclSession;
    try {
      session = await aclSession(ctx, c, dc);
    } catch (err) {
      return ctx.failure(c, dc, err, "acls");
    }
    const message = c.req.query("loggedout") === "1" ? "You are logged out: pages now read with the agent's default token." : undefined;
    return loginAnswer(ctx, c, dc, session, message, 200, loginTarget(c.req.query("next"), ctx.base, dc));
  });
  app.post(login, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const form = (await c.req.parseBody({ all: true }).catch(() => ({}))) as FormBody;
    const secret = formText(form, "token").trim();
    const next = loginTarget(formText(form, "next"), ctx.base, dc);
    let session: AclSession;
    try {
      session = await aclSession(ctx, c, dc);
    } catch (err) {
      return ctx.failure(c, dc, err, "acls");
    }
    if (secret === "") return loginAnswer(ctx, c, dc, session, "Token SecretID: paste the SecretID of a token.", 400, next);
    try {
      await ctx.read<TokenView>("/v1/acl/token/self", dc, secret);
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal === "off") return loginAnswer(ctx, c, dc, { ...session, state: "off" }, undefined, 200, next);
      if (refusal === "other") return ctx.failure(c, dc, err, "acls");
      return loginAnswer(ctx, c, dc, session, `This token was not accepted: the agent answered "${(err as Error).message}". Nothing was saved.`, 403, next);
    }
    setCookie(c, TOKEN_COOKIE, secret, ctx.cookie(c));
    return c.redirect(next, 303);
  });
  app.post(`${ctx.base}:dc/acls/logout`, (c) => {
    deleteCookie(c, TOKEN_COOKIE, ctx.cookie(c));
    return c.redirect(aclHref(ctx.base, c.req.param("dc") ?? "", "login?loggedout=1"), 303);
  });
}

export const aclPages: UiPageModule = {
  routes(app, ctx) {
    loginRoutes(app, ctx);
    tokenRoutes(app, ctx);
    policyRoutes(app, ctx);
    roleRoutes(app, ctx);
  },
  css: `.acl-session{display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center;color:var(--muted);margin:0 0 1em}.acl-session p{margin:0}
.acl-form{display:flex;flex-direction:column;gap:.3em;max-width:46em;margin:0 0 1.5em}.acl-form>label{font-weight:600;margin-top:.4em}
.acl-form fieldset label,.acl-delete label{display:block;font-weight:400}.acl-form button,.acl-delete button{align-self:flex-start;margin-top:.5em}
textarea{font:13px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:.4em;width:100%}
.acl-error{color:var(--crit);font-weight:600}
dl.acl-props{display:grid;grid-template-columns:max-content 1fr;gap:.3em 1em;margin:0 0 1.5em}dl.acl-props dt{font-weight:600;color:var(--muted)}dl.acl-props dd{margin:0}
pre.acl-rules,pre.acl-config{background:var(--head);border:1px solid var(--line);padding:.6em;overflow:auto;margin:0}
.acl-delete{margin-top:2em;border-top:1px solid var(--line);padding-top:.5em}.acl-delete h2{font-size:1.1em}
.acl-secret summary{cursor:pointer;color:var(--accent)}`,
};
