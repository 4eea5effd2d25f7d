// What the counter, admin, kiosk and dashboard pages share: each has its
// own catalog of words W (language → key → text, from
// static/words/PAGE.json) set on its data-w elements, with the words of
// the staff catalog where it has none; the counter and admin
// pages a message line (#message) and the daemon's problems (JSON with
// code, title, detail) to say in the person's language, and dialogs; the
// counter and kiosk pages actions sent with an idempotency key. Loaded
// before the page's own script.
var NowServingStaff = (function () {
  "use strict";
  // catalogs are the pages' words by catalog name, then language, then
  // key: the script /static/words/NAME.js, which the daemon makes of the
  // catalog static/words/NAME.json (web/lang.go), adds NAME's with add,
  // after this script and before the page's own. "staff" holds the words
  // the counter and admin pages both say: their header and dialogs, and
  // the refusals any staff call can meet.
  var catalogs = {};
  function add(name, W) { catalogs[name] = W; }
  // catalog is the words of name (language → key → text), empty when the
  // page did not load them.
  function catalog(name) { return catalogs[name] || {}; }
  // word is key of W, else of the staff catalog, in language l; undefined
  // when neither has it.
  function word(W, l, key) {
    var staff = catalog("staff");
    return (W[l] && W[l][key]) || (staff[l] && staff[l][key]);
  }
  // pickLang is the first of ?lang= and the browser's languages that W
  // has, else "en".
  function pickLang(W) {
    var want = [new URLSearchParams(location.search).get("lang")].concat(navigator.languages || [navigator.language || "en"]);
    for (var i = 0; i < want.length; i++) {
      var base = (want[i] || "").toLowerCase().split("-")[0];
      if (W[base]) return base;
    }
    return "en";
  }
  // words returns t(key, args): the word key of W (or staff) in the
  // language lang() names (else English, else the key), with {x} replaced
  // from args.
  function words(W, lang) {
    return function t(key, args) {
      var s = word(W, lang(), key) || word(W, "en", key) || key;
      return s.replace(/\{(\w)\}/g, function (_, k) { return args && args[k] !== undefined ? String(args[k]) : ""; });
    };
  }
  // apply sets every element with data-w to its word of t, and the page's
  // language to lang.
  function apply(t, lang) {
    var els = document.querySelectorAll("[data-w]");
    for (var i = 0; i < els.length; i++) els[i].textContent = t(els[i].getAttribute("data-w"));
    document.documentElement.lang = lang;
  }
  // closers makes every data-close button close its dialog.
  function closers() {
    document.querySelectorAll("[data-close]").forEach(function (b) {
      b.addEventListener("click", function () { b.closest("dialog").close(); });
    });
  }
  // key is a new idempotency key for one action: prefix and 32 random
  // hex digits.
  function key(prefix) {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return prefix + Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }
  // retry resolves as send() does; when it rejects (no answer), it sends
  // again after pause(n) ms, the n-th time, at most twice: with the same
  // key, the daemon answers a repeat with the first result.
  function retry(send, pause) {
    var tries = 0;
    function again() {
      return send().catch(function (err) {
        if (++tries > 2) throw err;
        var ms = pause(tries);
        return new Promise(function (res) { setTimeout(res, ms); }).then(again);
      });
    }
    return again();
  }
  // say shows text in #message, as a refusal (an alert) when bad.
  function say(text, bad) {
    var m = document.getElementById("message");
    m.textContent = text;
    m.className = "message" + (bad ? " refusal" : " ok");
    m.setAttribute("role", bad ? "alert" : "status");
  }
  // refusal says a problem p with the page's words e_CODE (t and W its
  // words); an ended session goes to the login page.
  function refusal(t, W, p) {
    var code = p && p.code;
    if (code === "login_required") { location.href = "/login?ended=1"; return t("e_login_required"); }
    if (code && word(W, "en", "e_" + code)) return t("e_" + code, { d: p.detail || p.title || "" });
    return t("e_other", { d: (p && (p.detail || p.title)) || "?" });
  }
  // api GETs path, or POSTs body as JSON with the session's CSRF token
  // csrf(); it resolves with ok, status and the answer's JSON (a problem
  // of code "other" when the answer is not JSON).
  function api(path, body, csrf) {
    var o = { method: body ? "POST" : "GET", credentials: "same-origin", headers: {} };
    if (body) {
      o.headers["Content-Type"] = "application/json";
      o.headers["X-CSRF-Token"] = csrf();
      o.body = JSON.stringify(body);
    }
    return fetch(path, o).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, status: r.status, body: j }; },
        function () { return { ok: false, status: r.status, body: { code: "other", detail: "HTTP " + r.status } }; });
    });
  }
  return { add: add, catalog: catalog, pickLang: pickLang, words: words, apply: apply, closers: closers, key: key, retry: retry, say: say, refusal: refusal, api: api };
})();
