// The demo page's three files: the HTML (what a site adds, the thread, a count, and the demo's
// controls), its stylesheet and its script. The thread is the service's indexable fragment
// (src/modules/indexable/, docs/seo.md) included by the page's server, as a site that cares about
// search would do: its comments are in the page's HTML with JavaScript off, and thread.js takes them
// over in place. No inline script or style: the page is served with a strict CSP, the same a careful
// site would use.

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page. `thread`: the fragment's HTML as the service answered it (its own escaping done), put in
 * as it is; null: the plain element, for a discussion the fragment could not be read for.
 */
export function demoHtml(opts: { origin: string; publishableKey: string; discussionId: string; thread: string | null }): string {
  const key = escape(opts.publishableKey);
  const origin = escape(opts.origin);
  const id = escape(opts.discussionId);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Embed demo · engagement service</title>
<link rel="stylesheet" href="/embed/demo/demo.css">
</head>
<body>
<header class="site">
  <p class="eyebrow">engagement service · embed demo</p>
  <h1>A comment thread in any page</h1>
  <p>This page is a site's article page. Its server puts the comments in its HTML (what search engines and readers without JavaScript see) and one script makes them live:</p>
  <pre><code>&lt;!-- where the comments go: the page's server includes the answer of --&gt;
GET ${origin}/embed/v1/discussions/${id}.html?key=${key}
&lt;!-- once, at the end of &lt;body&gt; --&gt;
&lt;script src="${origin}/embed/v1/thread.js"&gt;&lt;/script&gt;</code></pre>
</header>
<section class="controls" aria-label="Demo controls">
  <form id="sign-in" class="row">
    <label for="name">Your name</label>
    <input id="name" name="name" autocomplete="nickname" maxlength="60" placeholder="e.g. Grace" required>
    <button type="submit">Sign in</button>
  </form>
  <p id="signed-in" class="row" hidden>Signed in as <strong id="who"></strong> <button type="button" id="sign-out">Sign out</button></p>
  <div class="row">
    <label for="theme">Theme</label>
    <select id="theme"><option value="">Follow the system</option><option value="light">Light</option><option value="dark">Dark</option></select>
    <label for="lang">Language</label>
    <select id="lang"><option value="en">English</option><option value="de">Deutsch</option></select>
  </div>
  <p class="hint">The sign-in here is a stub: a real site's backend signs the reader's identity (or hands over its identity provider's token). Open this page in a second window, sign in as someone else, and watch comments, replies and reactions arrive live.</p>
</section>
<main>
  <article>
    <h2>Welcome to the embed demo</h2>
    <p class="byline"><engagement-count discussion-id="${id}"></engagement-count></p>
    <p>Everything below the line is the <code>&lt;engagement-thread&gt;</code> element, talking to this service with a publishable key.</p>
  </article>
${opts.thread ?? `  <engagement-thread discussion-id="${id}" publishable-key="${key}"></engagement-thread>\n`}</main>
<script src="/embed/v1/count.js" data-publishable-key="${key}"></script>
<script src="/embed/v1/thread.js"></script>
<script src="/embed/demo/demo.js"></script>
</body>
</html>
`;
}

export const DEMO_CSS = `:root{color-scheme:light dark;--bg:#fbfaf7;--fg:#1d2430;--muted:#5b6472;--line:#d8dde5;--card:#ffffff}
:root[data-theme=dark]{--bg:#15191f;--fg:#e6e9ee;--muted:#a3acb9;--line:#39414d;--card:#1f252d}
@media (prefers-color-scheme: dark){:root:not([data-theme=light]){--bg:#15191f;--fg:#e6e9ee;--muted:#a3acb9;--line:#39414d;--card:#1f252d}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0 auto;max-width:780px;padding:24px 16px 64px;background:var(--bg);color:var(--fg);font:16px/1.6 Georgia,"Times New Roman",serif}
h1{font-size:2em;line-height:1.2;margin:.2em 0 .4em}
h2{margin:1.2em 0 .2em}
.eyebrow,.hint,.byline,label,button,input,select{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:.75em;color:var(--muted);margin:0}
pre{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px;overflow:auto;font-size:.8em}
.controls{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;margin:20px 0}
.row{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin:6px 0}
input,select{font-size:.95em;padding:6px 8px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
button{font-size:.95em;padding:6px 12px;border-radius:6px;border:1px solid var(--line);background:var(--bg);color:var(--fg);cursor:pointer}
.hint,.byline{color:var(--muted);font-size:.85em}
.attention{outline:3px solid #e0a100;outline-offset:3px}
engagement-thread{margin-top:16px;border-top:1px solid var(--line);padding-top:16px;--engagement-background:var(--bg);--engagement-surface:var(--card)}
`;

export const DEMO_JS = `// The demo's controls: sign in (a stub that asks the service for a demo identity), theme, language.
(function () {
  var thread = document.querySelector("main engagement-thread");
  var form = document.getElementById("sign-in");
  var nameInput = document.getElementById("name");
  var signedIn = document.getElementById("signed-in");
  var who = document.getElementById("who");
  var KEY = "engagement-demo-identity";

  function show() {
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (e) { saved = null; }
    thread.identity = saved ? saved.token : null;
    form.hidden = !!saved;
    signedIn.hidden = !saved;
    who.textContent = saved ? saved.name : "";
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var name = nameInput.value.trim();
    fetch("/embed/demo/sign-in", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: name }) })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        if (!body.token) throw new Error(body.detail || "sign-in failed");
        sessionStorage.setItem(KEY, JSON.stringify({ token: body.token, name: name }));
        show();
      })
      .catch(function (err) { alert(err.message); });
  });
  document.getElementById("sign-out").addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    show();
    nameInput.focus();
  });
  thread.addEventListener("engagement:sign-in-required", function () {
    form.classList.add("attention");
    nameInput.focus();
    setTimeout(function () { form.classList.remove("attention"); }, 1500);
  });
  document.getElementById("theme").addEventListener("change", function (e) {
    var v = e.target.value;
    if (v) { thread.setAttribute("theme", v); document.documentElement.dataset.theme = v; }
    else { thread.removeAttribute("theme"); delete document.documentElement.dataset.theme; }
  });
  document.getElementById("lang").addEventListener("change", function (e) {
    thread.setAttribute("lang", e.target.value);
    document.documentElement.lang = e.target.value;
  });
  show();
})();
`;
