/** The web UI (issue 21): server-rendered pages over the agent's own /v1 API. */
export { createUi, normalizeContentPath, TOKEN_COOKIE, type ApiCall, type UiDeps } from "./app.tsx";
