// What the counter, admin and kiosk pages share: each has its own table of
// words W (language → key → text) and, but for the kiosk, a message line
// (#message) and the daemon's problems (JSON with code, title, detail) to
// say in the person's language. Loaded before the page's own script.
var NowServingStaff = (function () {
  "use strict";
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
  // words returns t(key, args): the word key of W in the language lang()
  // names (else English, else the key), with {x} replaced from args.
  function words(W, lang) {
    return function t(key, args) {
      var s = (W[lang()] && W[lang()][key]) || W.en[key] || key;
      return s.replace(/\{(\w)\}/g, function (_, k) { return args && args[k] !== undefined ? String(args[k]) : ""; });
    };
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
    if (code && W.en["e_" + code]) return t("e_" + code, { d: p.detail || p.title || "" });
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
  return { pickLang: pickLang, words: words, say: say, refusal: refusal, api: api };
})();
