//! What every page shares: the layout (written with `maud`, which escapes every value it
//! is given), the one stylesheet and the one script, both inline, and the headers of every
//! answer: a Content-Security-Policy that allows exactly that style and that script (by
//! their SHA-256), images, the font and event streams from the site itself, and nothing
//! else (no external resource, no frame, no form, no plugin); no cookie is ever set.

use std::convert::Infallible;
use std::sync::LazyLock;

use base64::Engine as _;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest as _, Sha256};
use spellbridge_core::Language;

use super::error::SiteError;
use super::words::{self, keep, words};
use crate::board::font;

/// The body of every answer the listener gives: whole, or a stream of events.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The site's stylesheet.
pub const STYLE: &str = r#"
@font-face{font-family:Board;src:url(/font.otf) format("opentype")}
:root{--ink:#1d2330;--mute:#5b6475;--line:#d8dce4;--panel:#f5f6f9;--accent:#6b3fa0;--ok:#1e7a46}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",Board,sans-serif;color:var(--ink);background:#fff}
header{background:var(--ink);color:#fff;padding:.6rem 1.2rem;display:flex;gap:1.2rem;align-items:baseline;flex-wrap:wrap}
header a{color:#fff;text-decoration:none}
header .brand{font-weight:700;font-size:1.15rem;margin-right:auto}
header .lang{font-size:.85rem;opacity:.85}
main{max-width:62rem;margin:0 auto;padding:1rem 1.2rem 3rem}
h1{font-size:1.5rem;margin:.6rem 0 .2rem}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
.sub{color:var(--mute);margin:0 0 .8rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600;white-space:nowrap}
td.when{white-space:nowrap;color:var(--mute)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
.board{display:block;max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:var(--panel)}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.6rem;margin:.6rem 0}
.fact{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.5rem .7rem}
.fact b{display:block;font-size:.8rem;color:var(--mute);font-weight:600}
.tag{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;background:var(--panel);border:1px solid var(--line)}
.tag.live{background:#e7f6ee;border-color:#9fd8b6;color:var(--ok)}
.told{margin:0;padding-left:1rem;color:var(--mute)}
.told li{margin:.1rem 0}
.glyph{font-family:Board,"Noto Sans CJK SC",sans-serif}
details pre{background:var(--panel);padding:.6rem;border-radius:6px;overflow:auto;font-size:.8rem;max-height:24rem}
.status::after{content:"";margin-left:.4rem}
body[data-live=on] .status::after{content:"● live";color:var(--ok);font-size:.85rem}
footer{color:var(--mute);font-size:.8rem;text-align:center;padding:1rem}
a{color:var(--accent)}
.wide{max-width:100%;overflow-x:auto}
td{overflow-wrap:anywhere}
.earlier summary{cursor:pointer;color:var(--accent);margin:.6rem 0}
@media(max-width:40rem){
header{padding:.5rem .8rem;gap:.8rem}
main{padding:.6rem .8rem 2rem}
th,td{padding:.3rem .35rem}
.facts{grid-template-columns:1fr}
table.history thead{display:none}
table.history tr{display:block;border-bottom:1px solid var(--line);padding:.35rem 0}
table.history td{display:inline;border:0;padding:0 .4rem 0 0}
table.history td:last-child{display:block;padding-top:.2rem}
table.history td:empty{display:none}
}
"#;

/// The site's one script: on a table's page (and on `/`, whose stream says when any shown
/// table changed), follows its event stream and, after each `update`, fetches the page
/// again and, once its new board picture has loaded, puts its new `<main>` in place (no
/// reload, no blank picture in between).
pub const SCRIPT: &str = r##"
(()=>{const m=document.querySelector("main[data-events]");if(!m||!window.EventSource)return;
let busy=false,again=false;
const load=async()=>{if(busy){again=true;return}busy=true;
try{const r=await fetch(location.href,{cache:"no-store"});
if(r.ok){const d=new DOMParser().parseFromString(await r.text(),"text/html");const n=d.querySelector("main");
const b=n&&n.querySelector("#board");if(b)await new Promise(k=>{const i=new Image();i.onload=i.onerror=k;i.src=b.getAttribute("src")});
if(n){m.replaceChildren(...Array.from(n.childNodes));m.dataset.sequence=n.dataset.sequence;m.dataset.finished=n.dataset.finished}}}catch(e){}
busy=false;if(again){again=false;load()}};
const s=new EventSource(m.dataset.events);
s.onopen=()=>{document.body.dataset.live="on"};
s.onerror=()=>{document.body.dataset.live="off"};
s.addEventListener("update",e=>{const u=JSON.parse(e.data);
if(String(u.sequence)!==m.dataset.sequence||u.finished!==(m.dataset.finished==="true"))load()});})();
"##;

/// The Content-Security-Policy of every page.
pub static POLICY: LazyLock<String> = LazyLock::new(|| {
    let hash = |text: &str| base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src 'self'; font-src 'self'; \
         connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        hash(STYLE),
        hash(SCRIPT)
    )
});

/// A whole page: `title`, the site's header and `content` as its `<main>` (with `main`'s
/// attributes already in `content`'s caller: see [`main`]).
pub fn layout(language: Language, title: &str, main: Markup) -> Markup {
    let w = words(language);
    let other = match language {
        Language::En => ("?lang=zh-CN", "中文"),
        Language::ZhCn => ("?", "English"),
    };
    html! {
        (DOCTYPE)
        html lang=(language.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · " (w.site) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    a.brand href={ "/" (keep(language)) } { (w.site) }
                    a href={ "/" (keep(language)) } { (w.tables) }
                    a href={ "/leaderboard" (keep(language)) } { (w.leaderboard) }
                    a.lang href=(other.0) hreflang=(if language == Language::En { "zh-CN" } else { "en" }) { (other.1) }
                }
                (main)
                footer { (w.footer) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
}

/// A 200 page.
pub fn ok(markup: Markup) -> Response<Body> {
    html_response(StatusCode::OK, markup)
}

/// An HTML answer with the site's headers.
pub fn html_response(status: StatusCode, markup: Markup) -> Response<Body> {
    html_bytes(status, Bytes::from(markup.into_string()))
}

/// An HTML answer, already written, with the site's headers.
pub fn html_bytes(status: StatusCode, html: Bytes) -> Response<Body> {
    let mut response = whole(status, html, "text/html; charset=utf-8");
    response.headers_mut().insert(
        HeaderName::from_static("content-security-policy"),
        HeaderValue::from_str(POLICY.as_str())
            .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'")),
    );
    response
}

/// A whole answer of `content_type` with the headers every answer of the site has.
pub fn whole(status: StatusCode, body: Bytes, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(HeaderName::from_static("x-content-type-options"), HeaderValue::from_static("nosniff"));
    headers.insert(HeaderName::from_static("referrer-policy"), HeaderValue::from_static("no-referrer"));
    headers.insert(HeaderName::from_static("x-frame-options"), HeaderValue::from_static("DENY"));
    response
}

/// A short plain-text answer.
pub fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    whole(status, Bytes::from_static(text.as_bytes()), "text/plain; charset=utf-8")
}

/// The 404 page.
pub fn not_found(language: Language) -> Response<Body> {
    let w = words(language);
    let main = html! {
        main {
            h1 { "404" }
            p { (w.not_found) " " a href={ "/" (keep(language)) } { (w.tables) } " · " a href={ "/leaderboard" (keep(language)) } { (w.leaderboard) } }
        }
    };
    html_response(StatusCode::NOT_FOUND, layout(language, "404", main))
}

/// The answer when the database could not be read: 500, the cause only in the log.
pub fn failed(error: &SiteError) -> Response<Body> {
    tracing::warn!(%error, "the spectator site could not answer");
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the site could not read its games just now; try again in a moment\n",
    )
}

/// `/font.otf`: the board font (SIL OFL 1.1), cached for a day.
pub fn font() -> Response<Body> {
    let mut response = whole(StatusCode::OK, Bytes::from_static(font::DATA), "font/otf");
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    response
}

/// The language-keeping suffix of the site's links.
pub fn suffix(language: Language) -> &'static str {
    words::keep(language)
}
