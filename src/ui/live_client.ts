/**
 * The UI's client module (source text, served as an asset): for now it marks the page as scripted and
 * makes "/" focus the page's filter. Live updates over server-sent events come in a later step; every
 * page works without it.
 */
export const LIVE_JS = `document.body.dataset.js="on";
document.addEventListener("keydown",e=>{if(e.key==="/"&&!(e.target instanceof HTMLInputElement)&&!(e.target instanceof HTMLTextAreaElement)){const f=document.querySelector("[data-filter]");if(f){e.preventDefault();f.focus();}}});
`;
