// The counter page: one person at one counter. It learns who it is from
// /counter/api/session, follows the site's public event stream
// (/display/{site}/events) and reads its counter's board again after each
// batch of changes, so it never shows a stale state. Each action is one
// POST with the session's CSRF token and an idempotency key made for the
// click: a double click sends nothing more while the first is under way,
// and a retry after a dropped connection sends the same key, so the
// engine answers the first result again and never calls twice.
(function () {
  "use strict";

  var W = NowServingStaff.catalog("counter"); // static/words/counter.json

  var params = new URLSearchParams(location.search);
  var S = NowServingStaff, lang = S.pickLang(W), t = S.words(W, function () { return lang; }), say = S.say;
  var me = null, site = null, counter = null, board = null, es = null, pending = false, reading = false, again = false;

  function $(id) { return document.getElementById(id); }
  function name(names, fallback) { return (names && (names[lang] || names[site.langs[0]])) || fallback; }
  function refusal(p) { return S.refusal(t, W, p); }

  function api(path, body) { return S.api(path, body, function () { return me.csrf; }); }

  function base() { return "/counter/api/" + encodeURIComponent(site.id) + "/" + encodeURIComponent(counter.id); }

  // act sends one action; a network failure is retried twice with the
  // same key (the engine answers a repeated key with the first result).
  function act(action, extra) {
    if (pending || !counter) return;
    pending = true;
    setButtons();
    var body = { key: S.key("web-") };
    for (var k in extra || {}) body[k] = extra[k];
    say(t("sending"));
    var sent = S.retry(function () { return api(base() + "/" + action, body); },
      function (n) { say(t("retrying"), true); return 500 * n; });
    // The answer is said once the board shows what it did.
    sent.then(function (r) {
      return read().then(function () {
        if (r.ok) say(t("ok_" + action, { n: r.body.ticket ? r.body.ticket.number : "" }));
        else say(refusal(r.body), true);
      });
    }, function () { say(t("e_network"), true); }).then(function () {
      pending = false;
      setButtons();
    });
  }

  // read fetches the board and resolves when it is shown; a read asked
  // for while one runs runs after it (and resolves with it).
  var waiters = [];
  function read() {
    if (!counter) return Promise.resolve();
    var p = new Promise(function (res) { waiters.push(res); });
    if (reading) { again = true; return p; }
    reading = true;
    var mine = waiters;
    waiters = [];
    api(base()).then(function (r) {
      if (r.ok) { board = r.body; render(); }
      else say(refusal(r.body), true);
    }, function () { setConn(false); }).then(function () {
      reading = false;
      mine.forEach(function (f) { f(); });
      if (again) { again = false; read().then(function () {}); }
    });
    return p;
  }

  function setConn(ok) {
    var c = $("conn");
    c.className = "conn " + (ok ? "ok" : "down");
    c.setAttribute("aria-label", t(ok ? "connected" : "notConnected"));
    c.title = c.getAttribute("aria-label");
  }

  function follow() {
    if (es) es.close();
    es = new EventSource("/display/" + encodeURIComponent(site.id) + "/events");
    es.addEventListener("state", function () { setConn(true); read(); });
    es.addEventListener("ping", function () { setConn(true); });
    es.onerror = function () { setConn(false); };
  }

  function wait(s) {
    var m = Math.floor(s / 60);
    return m < 1 ? t("lessMin") : t("min", { m: m });
  }

  function serviceName(code) {
    for (var i = 0; i < site.services.length; i++) if (site.services[i].code === code) return name(site.services[i].names, code);
    return code;
  }

  function setButtons() {
    var tk = board && board.ticket, mode = board ? board.mode : "open";
    var st = tk ? tk.status : "";
    var can = {
      next: !tk && mode === "open", call: !tk && mode === "open",
      recall: st === "CALLED", start: st === "CALLED", noshow: st === "CALLED",
      done: st === "SERVING", transfer: !!tk,
      pause: mode === "open", resume: mode !== "open"
    };
    var ids = { next: "a-next", call: "a-call", recall: "a-recall", start: "a-start", noshow: "a-noshow", done: "a-done",
      transfer: "a-transfer", pause: "a-pause", resume: "a-resume" };
    for (var a in ids) {
      var b = $(ids[a]);
      // aria-disabled, not disabled: the button keeps its focus and its
      // shortcut still answers, with the reason it cannot be done.
      b.setAttribute("aria-disabled", String(pending || !can[a]));
    }
  }

  function render() {
    var tk = board.ticket;
    $("number").textContent = tk ? tk.number : "—";
    $("number").className = "number" + (tk ? " " + tk.status.toLowerCase() : " idle");
    $("ticket-state").textContent = tk ? t(tk.status) : t("none");
    var meta = $("ticket-meta");
    meta.textContent = tk ? "· " + serviceName(tk.queue) + " · " : "";
    if (tk) {
      var cls = document.createElement("span");
      cls.className = "cls cls-" + tk.class;
      cls.textContent = t(tk.class);
      meta.appendChild(cls);
      if (tk.call_count > 1) meta.appendChild(document.createTextNode(" · " + t("calls", { n: tk.call_count })));
    }
    var mode = board.mode.toLowerCase();
    $("mode").textContent = t("modeIs", { m: t(mode) });
    $("mode").className = "mode " + mode;
    var q = $("queues");
    q.textContent = "";
    board.queues.forEach(function (sq) {
      var sec = document.createElement("section");
      var h = document.createElement("h3");
      h.textContent = serviceName(sq.service) + " · " + sq.waiting;
      sec.appendChild(h);
      if (!sq.tickets.length) {
        var p = document.createElement("p");
        p.className = "empty";
        p.textContent = t("nobody");
        sec.appendChild(p);
      } else {
        var ol = document.createElement("ol");
        sq.tickets.forEach(function (w) {
          var li = document.createElement("li");
          li.className = "cls-" + w.class;
          var n = document.createElement("span");
          n.className = "n";
          n.textContent = w.number;
          var c = document.createElement("span");
          c.className = "c";
          var cls = document.createElement("span");
          cls.className = "cls";
          cls.textContent = t(w.class);
          c.appendChild(cls);
          if (w.for_counter) c.appendChild(document.createTextNode(" · " + t("forYou")));
          var m = document.createElement("span");
          m.className = "m";
          m.textContent = wait(w.waiting_s);
          li.appendChild(n); li.appendChild(c); li.appendChild(m);
          ol.appendChild(li);
        });
        sec.appendChild(ol);
        if (sq.waiting > sq.tickets.length) {
          var more = document.createElement("p");
          more.className = "empty";
          more.textContent = t("more", { n: sq.waiting - sq.tickets.length });
          sec.appendChild(more);
        }
      }
      q.appendChild(sec);
    });
    var tc = $("to-counters");
    if (!tc.children.length) {
      board.counters.forEach(function (c) {
        if (c.id === counter.id) return;
        tc.appendChild(new Option(name(c.names, c.id), "counter:" + c.id));
      });
    }
    setButtons();
    document.body.dataset.ready = "1";
    document.body.dataset.version = String(board.version);
  }

  function choose(siteID, counterID) {
    me.sites.forEach(function (s) {
      s.counters.forEach(function (c) {
        if (s.id === siteID && c.id === counterID) { site = s; counter = c; }
      });
    });
    if (!counter) { site = me.sites[0]; counter = site.counters[0]; }
    try { localStorage.setItem("nowserving.counter", site.id + "/" + counter.id); } catch (e) { /* private mode */ }
    $("pick").value = site.id + "/" + counter.id;
    $("counter-name").textContent = name(counter.names, counter.id);
    document.title = name(counter.names, counter.id) + " · nowserving";
    var ts = $("to-services");
    ts.textContent = "";
    ts.label = t("service");
    $("to-counters").label = t("counter");
    site.services.forEach(function (s) { ts.appendChild(new Option(name(s.names, s.code), "service:" + s.code)); });
    $("to-counters").textContent = "";
    board = null;
    follow();
    read();
  }

  function start() {
    S.apply(t, lang);
    api("/counter/api/session").then(function (r) {
      if (!r.ok) { say(refusal(r.body), true); return; }
      me = r.body;
      $("user").textContent = me.name;
      $("logout-csrf").value = me.csrf;
      $("admin-link").hidden = me.role !== "admin";
      if (!me.sites.length) { say(t("noCounters"), true); return; }
      var pick = $("pick");
      me.sites.forEach(function (s) {
        s.counters.forEach(function (c) {
          var label = name.call(null, c.names, c.id);
          pick.appendChild(new Option((me.sites.length > 1 ? s.id + " · " : "") + ((c.names && (c.names[lang] || c.names[s.langs[0]])) || label), s.id + "/" + c.id));
        });
      });
      if (pick.options.length > 1) pick.parentElement.hidden = false;
      var want = params.get("counter") || "";
      if (want && want.indexOf("/") < 0) want = me.sites[0].id + "/" + want;
      if (!want) { try { want = localStorage.getItem("nowserving.counter") || ""; } catch (e) { want = ""; } }
      var parts = want.split("/");
      site = me.sites[0];
      choose(parts[0], parts.slice(1).join("/"));
      pick.addEventListener("change", function () {
        var p = pick.value.split("/");
        choose(p[0], p.slice(1).join("/"));
      });
    }, function () { say(t("e_network"), true); });
  }

  // Buttons and dialogs.
  function disabled(b) { return b.getAttribute("aria-disabled") === "true"; }
  function press(b) {
    if (pending) return;
    if (disabled(b)) {
      var why = { "a-next": board && board.mode !== "open" ? "e_counter_paused" : "e_counter_busy", "a-call": board && board.mode !== "open" ? "e_counter_paused" : "e_counter_busy",
        "a-pause": "e_invalid_transition", "a-resume": "e_invalid_transition" }[b.id] || "e_counter_idle";
      if (board && board.ticket && b.id !== "a-next" && b.id !== "a-call") why = "e_invalid_transition";
      say(t(why), true);
      return;
    }
    if (b.dataset.action) act(b.dataset.action);
    else if (b.dataset.dialog) openDialog(b.dataset.dialog);
  }
  function openDialog(which) {
    var d = $("d-" + which);
    d.showModal();
    (which === "call" ? $("call-number") : $("to")).focus();
  }
  document.querySelectorAll(".buttons button").forEach(function (b) {
    b.addEventListener("click", function () { press(b); });
  });
  S.closers();
  $("f-call").addEventListener("submit", function (e) {
    e.preventDefault();
    var n = $("call-number").value.trim().toUpperCase();
    $("d-call").close();
    $("call-number").value = "";
    if (n) act("call", { number: n });
  });
  $("f-transfer").addEventListener("submit", function (e) {
    e.preventDefault();
    var to = $("to").value, i = to.indexOf(":");
    var body = { reason: $("reason").value.trim() };
    body[to.slice(0, i) === "service" ? "to_service" : "to_counter"] = to.slice(i + 1);
    if (!body.reason) delete body.reason;
    $("d-transfer").close();
    $("reason").value = "";
    act("transfer", body);
  });

  // Keyboard shortcuts: a letter alone, outside fields and dialogs.
  var keys = { n: "a-next", r: "a-recall", s: "a-start", d: "a-done", x: "a-noshow", t: "a-transfer", c: "a-call", p: "a-pause", o: "a-resume" };
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || document.querySelector("dialog[open]")) return;
    var id = keys[(e.key || "").toLowerCase()];
    if (!id) return;
    e.preventDefault();
    press($(id));
  });

  start();
})();
