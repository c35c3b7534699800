/**
 * The UI's client module (source text, served as an asset; about 1 KB gzipped). Every page works
 * without it. It makes "/" focus the page's filter, and the arrow keys move between datacenters in
 * the switcher (a <details> menu), where Esc closes it with focus back on its summary. On a page with
 * a live stream (body data-live-url) it opens one EventSource and swaps each pushed fragment in by
 * element id; the focused element, found again by its id or link target, keeps focus. The polite
 * status line says "Live", "Reconnecting", or "Updated: <summary>" only when the fragment's summary
 * (the element with id live-counts) says something new, and "Not live" once the server refused the
 * stream for good. While the tab is hidden the stream is closed; shown again, it resumes after the
 * last index seen.
 */
export const LIVE_JS = `const b=document.body;b.dataset.js="on";
document.addEventListener("keydown",e=>{if(e.key==="/"&&!(e.target instanceof HTMLInputElement)&&!(e.target instanceof HTMLTextAreaElement)&&!(e.target instanceof HTMLSelectElement)){const f=document.querySelector("[data-filter]");if(f){e.preventDefault();f.focus();}}});
const dd=document.querySelector("nav.dcs details");
if(dd)dd.addEventListener("keydown",e=>{const ls=[...dd.querySelectorAll("a")],i=ls.indexOf(document.activeElement);
if(e.key==="Escape"&&dd.open){dd.open=false;dd.querySelector("summary").focus();e.preventDefault();}
else if(e.key==="ArrowDown"||e.key==="ArrowUp"){dd.open=true;const n=e.key==="ArrowDown"?(i+1)%ls.length:(i<=0?ls.length-1:i-1);if(ls[n])ls[n].focus();e.preventDefault();}});
const url=b.dataset.liveUrl;let last=b.dataset.liveIndex||"0",es=null,said=null;
const focusKey=o=>{const f=document.activeElement;if(!f||!o.contains(f))return null;if(f.id)return "#"+CSS.escape(f.id);const h=f.getAttribute("href");return h?'[href="'+CSS.escape(h)+'"]':null;};
const status=t=>{const s=document.getElementById("live-status");if(s)s.textContent=t;};
function open(){if(!url||es)return;es=new EventSource(url+"&since="+encodeURIComponent(last));
es.addEventListener("open",()=>{b.dataset.live="on";status("Live");});
const swap=e=>{last=e.lastEventId||last;const t=document.createElement("template");t.innerHTML=e.data;const n=t.content.firstElementChild;const old=n&&document.getElementById(n.id);
if(old){old.setAttribute("aria-busy","true");const sel=focusKey(old);old.replaceWith(n);if(sel){const g=n.querySelector(sel);if(g)g.focus();}const c=document.getElementById("live-counts"),ct=c?c.textContent:"";if(ct!==said){said=ct;status("Live. Updated: "+ct);}}};
es.addEventListener("fragment",swap);
es.onerror=()=>{b.dataset.live="off";if(es&&es.readyState===2){es=null;status("Not live: the server refused the updates; reload to try again.");}else status("Reconnecting…");};}
function close(){if(es){es.close();es=null;b.dataset.live="off";status("Paused while the tab is hidden");}}
document.addEventListener("visibilitychange",()=>document.hidden?close():open());open();
`;
