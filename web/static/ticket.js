// Ticket status page (opened from the QR code): follows
// /t/{site}/{number}/events and says when the ticket is called.
(function () {
  "use strict";
  var parts = location.pathname.split("/");
  var site = decodeURIComponent(parts[2] || ""), number = decodeURIComponent(parts[3] || "");
  var got = false, lastStatus = "";

  function $(id) { return document.getElementById(id); }

  function minutes(s) {
    var m = Math.round(s / 60);
    return m < 1 ? "less than a minute" : "about " + m + " min";
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
        msg = p.ahead === 0 ? "You are next." : "Please wait; we will call your number.";
        $("ahead").textContent = String(p.ahead);
        $("wait").textContent = minutes(p.estimated_wait_s);
        break;
      case "CALLED":
        msg = "You are being called to counter " + counter;
        cls += " called";
        break;
      case "SERVING":
        msg = "Being served at counter " + counter;
        break;
      case "DONE":
        msg = "Thank you for your visit.";
        break;
      case "NO_SHOW":
        msg = "You missed your call. Please ask at the reception.";
        break;
      default:
        msg = "This ticket is " + t.status.toLowerCase().replace("_", " ") + ".";
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

  var es = new EventSource("/t/" + encodeURIComponent(site) + "/" + encodeURIComponent(number) + "/events");
  es.addEventListener("status", function (e) {
    got = true;
    render(JSON.parse(e.data));
    $("conn").className = "conn ok";
  });
  es.onerror = function () {
    $("conn").className = "conn down";
    if (!got && es.readyState === EventSource.CLOSED) {
      $("number").textContent = number;
      $("message").textContent = "No ticket " + number + " today.";
    }
  };
})();
