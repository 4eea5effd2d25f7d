// Ticket status page (opened from the QR code): follows
// /t/{site}/{number}/events and says when the ticket is called.
(function () {
  "use strict";
  var parts = location.pathname.split("/");
  var site = decodeURIComponent(parts[2] || ""), number = decodeURIComponent(parts[3] || "");
  var got = false, lastStatus = "";

  function $(id) { return document.getElementById(id); }

  var lang = "en";
  function T(key, args) { return nowServingT(lang, key, args); }

  function minutes(s) {
    var m = Math.round(s / 60);
    return m < 1 ? T("lessMinute") : T("aboutMin", { m: m });
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

  function render(st) {
    var p = st.position, t = p.ticket;
    if (st.lang && st.lang !== lang) {
      lang = st.lang;
      nowServingApply(lang);
    }
    $("site").textContent = st.site_name || st.site;
    $("service").textContent = st.service_name || t.queue;
    $("number").textContent = t.number;
    document.title = t.number + " - " + (st.site_name || st.site);
    var msg = "", cls = "message";
    var counter = t.counter;
    if (st.counter_name && st.counter_name !== t.counter && st.counter_name.indexOf(t.counter) < 0) {
      counter += " (" + st.counter_name + ")";
    }
    switch (t.status) {
      case "WAITING":
        msg = p.ahead === 0 ? T("next") : T("pleaseWait");
        $("ahead").textContent = String(p.ahead);
        $("wait").textContent = minutes(p.estimated_wait_s);
        break;
      case "CALLED":
        msg = T("called", { c: counter });
        cls += " called";
        break;
      case "SERVING":
        msg = T("serving", { c: counter });
        break;
      case "DONE":
        msg = T("done");
        break;
      case "NO_SHOW":
        msg = T("noShow");
        break;
      default:
        msg = T("other", { s: t.status.toLowerCase().replace("_", " ") });
    }
    if (t.status !== "WAITING") {
      $("ahead").textContent = "\u2013";
      $("wait").textContent = "\u2013";
    }
    $("message").textContent = msg;
    $("message").className = cls;
    document.body.dataset.status = t.status;
    if (t.status === "CALLED" && lastStatus !== "CALLED") beep();
    lastStatus = t.status;
  }

  // The QR code carries ?day=YYYY-MM-DD: the stream refuses another day.
  var es = new EventSource("/t/" + encodeURIComponent(site) + "/" + encodeURIComponent(number) + "/events" + location.search);
  es.addEventListener("status", function (e) {
    got = true;
    render(JSON.parse(e.data));
    $("conn").className = "conn ok";
  });
  es.onerror = function () {
    $("conn").className = "conn down";
    if (!got && es.readyState === EventSource.CLOSED) {
      $("number").textContent = number;
      $("message").textContent = T("notFound", { n: number });
    }
  };
})();
