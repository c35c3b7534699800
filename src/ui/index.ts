/** The web UI (issue 21): server-rendered pages over the same reads as src/http. */
export { createUi, normalizeContentPath, TOKEN_COOKIE, type BlockingWait, type Indexed, type UiDeps } from "./app.tsx";
