// Hall display: follows /display/{site}/events. Every (re)connect starts
// with a full "state"; "call" events chime and highlight the newest number.
// EventSource reconnects by itself after a drop.
(function () {
  "use strict";
  var site = decodeURIComponent(location.pathname.split("/")[2] || "");
  var state = null;
  var offset = 0; // server clock minus browser clock, ms
  var audio = null;
  var highlightUntil = 0;

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // chime plays two soft tones with WebAudio: no sound file needed. A TV
  // browser must allow autoplay (e.g. Chromium --autoplay-policy=no-user-gesture-required)
  // or be clicked once.
  function chime() {
    try {
      var AC = window.AudioContext || window.webkitAudioContext;
      if (!AC) return;
      audio = audio || new AC();
      if (audio.state === "suspended") audio.resume();
      var t = audio.currentTime;
      [880, 660].forEach(function (f, i) {
        var o = audio.createOscillator(), g = audio.createGain(), s = t + i * 0.35;
        o.type = "sine";
        o.frequency.value = f;
        g.gain.setValueAtTime(0.0001, s);
        g.gain.exponentialRampToValueAtTime(0.4, s + 0.02);
        g.gain.exponentialRampToValueAtTime(0.0001, s + 0.6);
        o.connect(g);
        g.connect(audio.destination);
        o.start(s);
        o.stop(s + 0.65);
      });
      // Counted for tests and for a look from the browser's console.
      document.body.dataset.chimes = String((+document.body.dataset.chimes || 0) + 1);
      document.body.dataset.audio = audio.state;
    } catch (e) { /* no audio: the display still works */ }
  }
  document.addEventListener("click", function () {
    var AC = window.AudioContext || window.webkitAudioContext;
    if (AC) { audio = audio || new AC(); audio.resume(); }
  });

  function tick() {
    var now = new Date(Date.now() + offset);
    var opts = { hour: "2-digit", minute: "2-digit", second: "2-digit" };
    if (state && state.tz) opts.timeZone = state.tz;
    try { $("clock").textContent = now.toLocaleTimeString([], opts); }
    catch (e) { $("clock").textContent = now.toLocaleTimeString(); }
    document.body.classList.toggle("flash", Date.now() < highlightUntil);
  }

  function render() {
    if (!state) return;
    nowServingApply(state.lang);
    $("site").textContent = state.name || state.site;
    document.title = nowServingT(state.lang, "title") + " - " + (state.name || state.site);
    var calls = state.calls || [];
    var cur = calls[0];
    $("current-number").textContent = cur ? cur.number : "\u2014";
    $("current-counter").textContent = cur ? (cur.counter_name || cur.counter) : "";
    var list = $("calls");
    list.textContent = "";
    calls.slice(1).forEach(function (c) {
      var li = el("li", "call");
      li.appendChild(el("span", "number", c.number));
      li.appendChild(el("span", "arrow", "\u2192"));
      li.appendChild(el("span", "counter", c.counter_name || c.counter));
      list.appendChild(li);
    });
    var w = $("waiting");
    w.textContent = "";
    (state.services || []).forEach(function (s) {
      var li = el("li", "service");
      li.appendChild(el("span", "name", s.name || s.code));
      li.appendChild(el("span", "count", String(s.waiting)));
      w.appendChild(li);
    });
    document.body.dataset.version = String(state.version);
  }

  function connected(ok) {
    $("conn").className = ok ? "conn ok" : "conn down";
  }

  var es = new EventSource("/display/" + encodeURIComponent(site) + "/events");
  es.addEventListener("state", function (e) {
    state = JSON.parse(e.data);
    offset = Date.parse(state.now) - Date.now();
    render();
    document.body.dataset.ready = "1";
    connected(true);
  });
  es.addEventListener("call", function (e) {
    var c = JSON.parse(e.data);
    if (state) {
      state.calls = [c].concat((state.calls || []).filter(function (x) { return x.number !== c.number; })).slice(0, 8);
      state.version = c.version;
    }
    highlightUntil = Date.now() + 8000;
    render();
    document.body.dataset.shownAt = String(Date.now()); // for tests and monitoring
    tick();
    chime();
  });
  es.onopen = function () { connected(true); };
  es.onerror = function () { connected(false); }; // EventSource retries by itself
  setInterval(tick, 1000);
  tick();
})();
