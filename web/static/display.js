// Hall display: follows /display/{site}/events. Every (re)connect starts
// with a full "state"; "call" events chime and highlight the newest
// number; "ping" events say the connection is alive in a quiet hall.
//
// The layout comes from the viewport (style.css): nothing scrolls; the
// lists keep only the rows that fit, and the big number shrinks until it
// fits its box. Without the daemon for OFFLINE_MS the whole screen says
// "not connected" and the numbers are cleared, so a stale call is never
// shown as current.
//
// Query parameters: ?lang=xx keeps one language (default: the site's
// languages in turn), ?rotate=S seconds per language (default 10, 0 keeps
// the main one).
(function () {
  "use strict";
  var OFFLINE_MS = 3000;
  var site = decodeURIComponent(location.pathname.split("/")[2] || "");
  var params = new URLSearchParams(location.search);
  var fixedLang = params.has("lang");
  var langs = nowServingLangs();
  var rotate = params.has("rotate") ? +params.get("rotate") : 10;
  var shown = 0; // index into langs of the language on screen
  var state = null;
  var offset = 0; // server clock minus browser clock, ms
  var audio = null;
  var highlightUntil = 0;
  var es = null, live = false, lostAt = Date.now(), lastHeard = 0;

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function lang() { return langs[shown % langs.length] || "en"; }

  // chime plays two soft tones with WebAudio: no sound file needed. A TV
  // browser must allow autoplay (Chromium: --autoplay-policy=no-user-gesture-required,
  // see the README's "Hall display" section) or be clicked once.
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

  // The clock is in the site's time zone and in the format of the site's
  // main language (or of ?lang=), never of the browser's locale.
  function tick() {
    var now = new Date(Date.now() + offset);
    var opts = { hour: "2-digit", minute: "2-digit" };
    if (state && state.tz) opts.timeZone = state.tz;
    try { $("clock").textContent = now.toLocaleTimeString(langs[0], opts); }
    catch (e) { $("clock").textContent = now.toLocaleTimeString(langs[0]); }
    document.body.classList.toggle("flash", Date.now() < highlightUntil);
  }

  // fitList drops rows from the end of list until it no longer overflows
  // its box, first those of class idle (services nobody waits for), and
  // returns how many are left.
  function fitList(list) {
    var idle = list.querySelectorAll(".idle");
    for (var i = idle.length - 1; i >= 0 && list.scrollHeight > list.clientHeight + 1; i--) {
      list.removeChild(idle[i]);
    }
    while (list.lastElementChild && list.scrollHeight > list.clientHeight + 1) {
      list.removeChild(list.lastElementChild);
    }
    return list.children.length;
  }

  // shrink lowers the font size of e until its text fits its width.
  function shrink(e) {
    e.style.fontSize = "";
    var size = parseFloat(getComputedStyle(e).fontSize);
    while (e.scrollWidth > e.clientWidth + 1 && size > 8) {
      size *= 0.92;
      e.style.fontSize = size + "px";
    }
  }

  function counterText(c, l) {
    return nowServingName(c.counter_names, l, c.counter_name || c.counter);
  }

  // row appends <li class=cls><span class=ac>a</span><span class=bc>b</span>.
  function row(list, cls, ac, a, bc, b) {
    var li = el("li", cls);
    li.appendChild(el("span", ac, a));
    li.appendChild(el("span", bc, b));
    list.appendChild(li);
  }

  function render() {
    var l = lang();
    nowServingApply(l);
    document.body.dataset.lang = l;
    var calls = (state && state.calls) || [];
    var cur = null;
    for (var i = 0; i < calls.length && !cur; i++) if (calls[i].calling) cur = calls[i];
    var name = state ? nowServingName(state.names, l, state.name || state.site) : "";
    $("site").textContent = name;
    document.title = nowServingT(l, "title") + (name ? " - " + name : "");
    $("current-number").textContent = cur ? cur.number : "\u2014";
    $("current-counter").textContent = cur ? "\u2192 " + counterText(cur, l) : "";
    var list = $("calls");
    list.textContent = "";
    calls.forEach(function (c) {
      if (c !== cur) row(list, "call" + (c.calling ? " calling" : ""), "number", c.number, "counter", "\u2192 " + counterText(c, l));
    });
    var w = $("waiting");
    w.textContent = "";
    ((state && state.services) || []).forEach(function (s) {
      row(w, s.waiting ? "service" : "service idle", "name", nowServingName(s.names, l, s.name || s.code), "count", String(s.waiting));
    });
    document.body.dataset.callsShown = String(fitList(list));
    document.body.dataset.waitingShown = String(fitList(w));
    shrink($("current-number"));
    shrink($("current-counter"));
    if (state) document.body.dataset.version = String(state.version);
  }

  // setLive shows the board (true) or the full-screen "not connected"
  // state with the numbers cleared (false).
  function setLive(ok) {
    document.body.classList.remove("connecting");
    document.body.classList.toggle("offline", !ok);
    $("offline").hidden = ok;
    $("conn").className = ok ? "conn ok" : "conn down";
    document.body.dataset.connected = ok ? "1" : "0";
    if (!ok && state) {
      state = null;
      render();
    }
  }

  function heard() { lastHeard = Date.now(); }

  function lost() {
    if (live) lostAt = Date.now();
    live = false;
  }

  function connect() {
    es = new EventSource("/display/" + encodeURIComponent(site) + "/events");
    es.addEventListener("state", function (e) {
      heard();
      state = JSON.parse(e.data);
      offset = Date.parse(state.now) - Date.now();
      if (!fixedLang && state.langs && state.langs.length) langs = state.langs;
      live = true;
      setLive(true);
      render();
      tick(); // the site's zone and language now, not at the next second
      document.body.dataset.ready = "1";
    });
    es.addEventListener("call", function (e) {
      heard();
      var c = JSON.parse(e.data);
      if (state) {
        state.calls = [c].concat((state.calls || []).filter(function (x) { return x.number !== c.number; }));
        state.version = c.version;
      }
      highlightUntil = Date.now() + 8000;
      render();
      document.body.dataset.shownAt = String(Date.now()); // for tests and monitoring
      tick();
      chime();
    });
    es.addEventListener("ping", heard);
    es.onerror = lost; // EventSource retries by itself; a new "state" ends the outage
  }

  // watch turns the screen to "not connected" OFFLINE_MS after the stream
  // failed, and restarts a stream that fell silent for over two heartbeats
  // (a dead peer whose connection never reported an error).
  function watch() {
    var now = Date.now();
    if (live && state && state.heartbeat_s && now - lastHeard > state.heartbeat_s * 2000 + 5000) {
      es.close();
      lost();
      connect();
    }
    if (!live && now - lostAt > OFFLINE_MS && !document.body.classList.contains("offline")) setLive(false);
  }

  function next() {
    if (langs.length < 2) return;
    shown = (shown + 1) % langs.length;
    render();
  }

  window.addEventListener("resize", render);
  connect();
  render();
  setInterval(tick, 1000);
  setInterval(watch, 250);
  if (rotate > 0) setInterval(next, rotate * 1000);
  tick();
})();
