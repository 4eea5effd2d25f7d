// Ticket status page (opened from the QR code): follows
// /t/{site}/{number}/events and says when the ticket is called.
//
// Language: ?lang=xx, else the first of the phone's languages the site
// has, else the site's main one; a link per site language switches.
(function () {
  "use strict";
  var parts = location.pathname.split("/");
  var site = decodeURIComponent(parts[2] || ""), number = decodeURIComponent(parts[3] || "");
  var got = false, lastStatus = "", last = null, missing = false;
  var langs = nowServingLangs();
  var lang = pick(langs);

  function $(id) { return document.getElementById(id); }

  function T(key, args) { return nowServingT(lang, key, args); }

  // pick is the first of the browser's languages among ls, else ls[0].
  function pick(ls) {
    if (ls.length === 1) return ls[0];
    var nav = navigator.languages || [navigator.language || ""];
    for (var i = 0; i < nav.length; i++) {
      var b = nav[i].toLowerCase().split("-")[0];
      if (ls.indexOf(b) >= 0) return b;
    }
    return ls[0];
  }

  function minutes(s) {
    var m = Math.round(s / 60);
    if (m < 1) return T("lessMinute");
    return m > 120 ? T("longWait") : T("aboutMin", { m: m });
  }

  function beep() {
    try {
      var AC = window.AudioContext || window.webkitAudioContext;
      var a = new AC(), o = a.createOscillator(), g = a.createGain();
      o.frequency.value = 880; g.gain.value = 0.3;
      o.connect(g); g.connect(a.destination);
      o.start(); o.stop(a.currentTime + 0.4);
    } catch (e) { /* ignore */ }
    if (navigator.vibrate) navigator.vibrate([300, 100, 300]);
  }

  // links lists the site's languages, each a link that switches to it.
  function links() {
    var nav = $("langs");
    nav.textContent = "";
    if (langs.length < 2) return;
    langs.forEach(function (l) {
      var a = document.createElement("a");
      a.href = "#";
      a.lang = l;
      a.textContent = nowServingT(l, "langName");
      if (l === lang) a.className = "on";
      a.onclick = function (e) { e.preventDefault(); lang = l; show(); };
      nav.appendChild(a);
    });
  }

  function message(st, t) {
    var name = nowServingName(st.counter_names, lang, t.counter), counter = t.counter;
    if (name !== t.counter && name.indexOf(t.counter) < 0) counter += " (" + name + ")";
    switch (t.status) {
      case "WAITING": return st.position.ahead === 0 ? T("next") : T("pleaseWait");
      case "CALLED": return T("called", { c: counter });
      case "SERVING": return T("serving", { c: counter });
      case "DONE": return T("done");
      case "NO_SHOW": return T("noShow");
      case "CANCELLED": return T("cancelled");
      case "EXPIRED": return T("expired");
    }
    return T("other", { s: t.status.toLowerCase().replace("_", " ") });
  }

  function render(st) {
    var p = st.position, t = p.ticket;
    var siteName = nowServingName(st.site_names, lang, st.site_name || st.site);
    $("site").textContent = siteName;
    $("service").textContent = nowServingName(st.service_names, lang, st.service_name || t.queue);
    $("number").textContent = t.number;
    document.title = t.number + " - " + siteName;
    var waiting = t.status === "WAITING";
    $("ahead").textContent = waiting ? String(p.ahead) : "\u2013";
    $("wait").textContent = waiting ? minutes(p.estimated_wait_s) : "\u2013";
    $("message").textContent = message(st, t);
    $("message").className = t.status === "CALLED" ? "message called" : "message";
    document.body.dataset.status = t.status;
    if (t.status === "CALLED" && lastStatus !== "CALLED") beep();
    lastStatus = t.status;
  }

  // show draws the page in lang from what is known so far.
  function show() {
    nowServingApply(lang);
    document.body.dataset.lang = lang;
    document.title = T("yourTicket");
    links();
    if (last) render(last);
    if (missing) {
      $("number").textContent = number;
      $("message").textContent = T("notFound", { n: number });
    }
  }

  // The QR code carries ?day=YYYY-MM-DD: the stream refuses another day.
  var q = new URLSearchParams(location.search);
  q.delete("lang");
  var qs = q.toString();
  var es = new EventSource("/t/" + encodeURIComponent(site) + "/" + encodeURIComponent(number) + "/events" + (qs ? "?" + qs : ""));
  es.addEventListener("status", function (e) {
    got = true;
    last = JSON.parse(e.data);
    render(last);
    $("conn").className = "conn ok";
  });
  es.onerror = function () {
    $("conn").className = "conn down";
    if (!got && es.readyState === EventSource.CLOSED) {
      missing = true;
      show();
    }
  };
  show();
})();
