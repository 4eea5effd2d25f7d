// Hall display: follows /display/{site}/events. Every (re)connect starts
// with a full "state"; "call" events chime and highlight the newest
// number; "ping" events say the connection is alive in a quiet hall.
//
// The layout comes from the viewport (style.css): nothing scrolls. The
// last calls keep the rows that fit. The waiting list never hides a
// service with people waiting (layoutWaiting): services nobody waits for
// give their place first; the list takes the height it needs from the
// last calls (which keep three rows); then its letters shrink and it
// uses more columns, and when even that is not
// enough it shows the services page by page, a page every PAGE_MS, its
// title saying which ("2/3"). A name too long for its place shrinks, then
// scrolls to and fro (fitText): it is never cut. The big number shrinks
// until it fits its box. A service its hours close says so, and when it
// opens, in the language on screen; when every service is closed the
// board says it instead of a number. Without the daemon for OFFLINE_MS
// the whole screen says "not connected" and the numbers are cleared, so a
// stale call is never shown as current.
//
// Query parameters: ?lang=xx keeps one language (default: the site's
// languages in turn), ?rotate=S seconds per language (default 10, 0 keeps
// the main one), ?page=S seconds per page of the waiting list (default
// 8). The right arrow key (a TV remote's) turns the page at once.
(function () {
  "use strict";
  var OFFLINE_MS = 3000;
  var site = decodeURIComponent(location.pathname.split("/")[2] || "");
  var params = new URLSearchParams(location.search);
  var fixedLang = params.has("lang");
  var langs = nowServingLangs();
  var rotate = params.has("rotate") ? +params.get("rotate") : 10;
  var PAGE_MS = (params.has("page") ? +params.get("page") : 8) * 1000 || 8000;
  var SCALES = [1, 0.85, 0.72, 0.6]; // of the waiting rows' letters, largest first
  var COL_EM = 6; // a column of the waiting list is at least this many letters wide
  var MAX_COLS = 4;
  var ONE_COL = 0.72; // the smallest letters tried in one column before two
  var page = 0; // the page of the waiting list on screen
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
    var text;
    try { text = now.toLocaleTimeString(langs[0], opts); }
    catch (e) { text = now.toLocaleTimeString(langs[0]); }
    // Only a new minute is written: tick runs at every state too, and a
    // text written again is laid out and painted again.
    if ($("clock").textContent !== text) $("clock").textContent = text;
    document.body.classList.toggle("flash", Date.now() < highlightUntil);
    if (state && openSig() !== shownOpen) render(); // a service's hours opened or closed it
  }

  var shownOpen = ""; // openSig at the last render
  function openSig() { return ((state && state.services) || []).map(isOpen).join(); }

  // fitList drops rows from the end of the last calls until the list no
  // longer overflows its box, and returns how many are left.
  function fitList(list) {
    while (list.lastElementChild && list.scrollHeight > list.clientHeight + 1) {
      list.removeChild(list.lastElementChild);
    }
    return list.children.length;
  }

  function overflows(e) { return e.scrollWidth > e.clientWidth + 1; }

  // fitText makes the text of e (a name: its one child span holds the
  // text) fit its width: it shrinks it down to 70 %, and a name still too
  // long scrolls to and fro (class scroll) rather than being cut.
  function fitText(e) {
    e.classList.remove("scroll");
    e.style.fontSize = "";
    if (!overflows(e)) return;
    var size = parseFloat(getComputedStyle(e).fontSize), min = size * 0.7;
    while (overflows(e) && size > min) {
      size *= 0.93;
      e.style.fontSize = size + "px";
    }
    if (!overflows(e)) return;
    e.classList.add("scroll"); // pads the text clear of the faded edges: measure after
    var over = e.firstChild.getBoundingClientRect().width - e.clientWidth;
    e.style.setProperty("--shift", -Math.ceil(over + 2) + "px");
    e.style.setProperty("--dur", Math.max(6, over / 30).toFixed(1) + "s");
  }

  // named is <span class=cls><span>text</span></span>, for fitText.
  function named(cls, text) {
    var e = el("span", cls);
    e.appendChild(el("span", "", text));
    return e;
  }

  function siteNow() { return Date.now() + offset; }

  // isOpen tells whether service s takes tickets now, from its open,
  // closes and opens times (so it closes on time without an event).
  function isOpen(s) {
    var now = siteNow(), closes = s.closes ? Date.parse(s.closes) : Infinity, opens = s.opens ? Date.parse(s.opens) : Infinity;
    if (s.open === false) return now >= opens;
    return now < closes || now >= opens;
  }

  // whenText is instant iso as the site says it in l (nowServingWhen).
  function whenText(iso, l) { return nowServingWhen(iso, l, state && state.tz, siteNow()); }

  // closedText says, in l, when closed service s opens ("opens Mon
  // 10:00": closed until then), or that it is closed; when the whole
  // board says it (siteClosed), only the latter.
  function closedText(s, l) {
    if (!siteClosed && s.opens && Date.parse(s.opens) > siteNow()) return nowServingT(l, "opensAt", { t: whenText(s.opens, l) });
    return nowServingT(l, "closed");
  }
  var siteClosed = false; // every service closed and nobody called

  function serviceRow(list, s, l) {
    var open = isOpen(s);
    var li = el("li", "service" + (s.waiting ? "" : " idle") + (open ? "" : " closed"));
    li.dataset.code = s.code;
    li.appendChild(named("name", nowServingName(s.names, l, s.name || s.code)));
    if (!open) li.appendChild(el("span", "note", closedText(s, l)));
    li.appendChild(el("span", "count", String(s.waiting)));
    list.appendChild(li);
  }

  // capacity is how many rows and columns of services fit the waiting
  // list, avail pixels high, at letter size scale; row is a row's height.
  function capacity(w, avail, scale, sample, l) {
    w.style.setProperty("--ws", String(scale));
    w.style.gridTemplateColumns = "";
    w.style.gridTemplateRows = "";
    w.textContent = "";
    serviceRow(w, sample, l);
    var li = w.firstChild, h = li.getBoundingClientRect().height, font = parseFloat(getComputedStyle(li).fontSize);
    var rows = Math.max(1, Math.floor((avail + 0.5) / h));
    var cols = Math.max(1, Math.min(MAX_COLS, Math.floor(w.clientWidth / (COL_EM * font))));
    return { rows: rows, cols: cols, row: h };
  }

  // keep is all with services nobody waits for left out from the end
  // until at most n remain.
  function keep(all, n) {
    var out = all.slice();
    for (var i = out.length - 1; i >= 0 && out.length > n; i--) if (!out[i].waiting) out.splice(i, 1);
    return out;
  }

  // plan chooses how the services are shown in avail pixels: one column
  // with letters down to ONE_COL (names stay whole), then more columns
  // from the largest letters down, the first at which every service with
  // people waiting fits; else pages of them at the smallest letters.
  function plan(w, avail, all, l) {
    var busy = all.filter(function (s) { return s.waiting > 0; });
    var cap;
    for (var pass = 0; pass < 2; pass++) {
      for (var i = 0; i < SCALES.length; i++) {
        if (pass === 0 && SCALES[i] < ONE_COL) break;
        cap = capacity(w, avail, SCALES[i], all[0], l);
        for (var c = pass + 1; c <= (pass ? cap.cols : 1); c++) {
          var n = cap.rows * c;
          if (busy.length <= n) return { scale: SCALES[i], cols: c, rows: cap.rows, row: cap.row, pages: [keep(all, n)] };
        }
      }
    }
    // As few pages as fit, evenly filled (11 in pages of 10 are 6 and 5).
    var n = Math.ceil(busy.length / (cap.rows * cap.cols)), per = Math.ceil(busy.length / n), pages = [];
    for (var j = 0; j < busy.length; j += per) pages.push(busy.slice(j, j + per));
    return { scale: SCALES[SCALES.length - 1], cols: cap.cols, rows: cap.rows, row: cap.row, pages: pages };
  }

  // waitingRoom is the height the waiting list may take: the side less
  // the last calls' title and three of their rows, and its own title.
  function waitingRoom(l) {
    var side = $("side"), calls = $("calls"), w = $("waiting");
    calls.textContent = "";
    callRow(calls, { number: "A000", counter: "0" }, l);
    var callRowH = calls.firstChild.getBoundingClientRect().height;
    calls.textContent = "";
    var gap = parseFloat(getComputedStyle(side).rowGap) || 0;
    var callsTitle = calls.getBoundingClientRect().top - calls.parentElement.getBoundingClientRect().top;
    var waitTitle = w.getBoundingClientRect().top - w.parentElement.getBoundingClientRect().top;
    return Math.max(0, side.clientHeight - gap - callsTitle - 3 * callRowH - waitTitle - 1);
  }

  // layoutWaiting fills the waiting list (see the top of the file) and
  // returns how many services it shows.
  function layoutWaiting(l) {
    var w = $("waiting"), all = (state && state.services) || [];
    var pg = $("waiting-page");
    w.textContent = "";
    pg.textContent = "";
    w.style.height = "0px";
    if (!all.length) return 0;
    var avail = waitingRoom(l);
    var p = plan(w, avail, all, l);
    page = page % p.pages.length;
    var shown = p.pages[page], rows = Math.min(p.rows, Math.ceil(shown.length / p.cols));
    if (p.pages.length > 1) rows = p.rows; // every page as high as the fullest
    w.style.setProperty("--ws", String(p.scale));
    w.style.gridTemplateColumns = "repeat(" + p.cols + ", minmax(0, 1fr))";
    w.style.gridTemplateRows = "repeat(" + rows + ", auto)";
    w.style.height = Math.ceil(rows * p.row) + "px";
    w.textContent = "";
    shown.forEach(function (s) { serviceRow(w, s, l); });
    if (p.pages.length > 1) pg.textContent = (page + 1) + "/" + p.pages.length;
    w.querySelectorAll(".name").forEach(fitText);
    document.body.dataset.waitingPages = String(p.pages.length);
    document.body.dataset.waitingPage = String(page);
    document.body.dataset.waitingCols = String(p.cols);
    document.body.dataset.waitingScale = String(p.scale);
    return shown.length;
  }

  // turnPage shows the next page of the waiting list, if it has several.
  function turnPage() {
    if (+document.body.dataset.waitingPages > 1) {
      page++;
      render();
    }
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

  // callRow appends the last call c to list.
  function callRow(list, c, l) {
    var li = el("li", "call" + (c.calling ? " calling" : ""));
    li.appendChild(el("span", "number", c.number));
    li.appendChild(named("counter", "\u2192 " + counterText(c, l)));
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
    $("site").firstChild.textContent = name;
    document.title = nowServingT(l, "title") + (name ? " - " + name : "");
    // Every service closed by its hours and nobody called: the board says
    // so, and when the first one opens.
    var services = (state && state.services) || [];
    var closed = siteClosed = !cur && services.length > 0 && services.every(function (s) { return !isOpen(s); });
    document.body.classList.toggle("closed", closed);
    if (closed) {
      var first = services.map(function (s) { return s.opens; }).filter(Boolean).sort()[0];
      $("current-number").textContent = nowServingT(l, "closed");
      $("current-counter").textContent = first ? nowServingT(l, "opensAt", { t: whenText(first, l) }) : "";
    } else {
      $("current-number").textContent = cur ? cur.number : "\u2014";
      $("current-counter").textContent = cur ? "\u2192 " + counterText(cur, l) : "";
    }
    // The waiting list first: it may take room from the last calls.
    document.body.dataset.waitingShown = String(layoutWaiting(l));
    shownOpen = openSig();
    var list = $("calls");
    list.textContent = "";
    calls.forEach(function (c) { if (c !== cur) callRow(list, c, l); });
    document.body.dataset.callsShown = String(fitList(list));
    list.querySelectorAll(".counter").forEach(fitText);
    fitText($("site"));
    shrink($("current-number"));
    shrink($("current-counter"));
    if (state) document.body.dataset.version = String(state.version);
    document.body.dataset.size = innerWidth + "x" + innerHeight; // laid out for this viewport
  }

  // setLive shows the board (true) or the full-screen "not connected"
  // state with the numbers cleared (false).
  function setLive(ok) {
    // At every state of a live stream: nothing is written again.
    var d = document.body.dataset;
    if (ok && d.connected === "1" && !document.body.classList.contains("connecting")) return;
    document.body.classList.remove("connecting");
    document.body.classList.toggle("offline", !ok);
    $("offline").hidden = ok;
    $("conn").className = ok ? "conn ok" : "conn down";
    d.connected = ok ? "1" : "0";
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

  // renderSoon lays the board out once for all the events that arrived
  // since it was last laid out, and at most every RENDER_MS: on a busy day
  // states come faster than a TV's browser lays a page out (each layout
  // measures every name), and rendering each one would leave the board
  // further and further behind; nobody reads a board faster than that. It
  // waits for the next frame after RENDER_MS; a page that gets no frames
  // (hidden) is laid out within 100 ms of it anyway.
  var RENDER_MS = 250;
  var soon = null, called = false, renderedAt = 0;
  function renderSoon(call) {
    called = called || call;
    if (soon) return;
    var f = soon = function () {
      if (soon !== f) return; // done already, by the frame or the timer
      soon = null;
      renderedAt = Date.now();
      render();
      if (called) document.body.dataset.shownAt = String(Date.now()); // for tests and monitoring
      called = false;
      if (state) document.body.dataset.ready = "1";
    };
    setTimeout(function () {
      requestAnimationFrame(f);
      setTimeout(f, 100);
    }, Math.max(0, renderedAt + RENDER_MS - Date.now()));
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
      renderSoon(false);
      tick(); // the site's zone and language now, not at the next second
    });
    es.addEventListener("call", function (e) {
      heard();
      var c = JSON.parse(e.data);
      if (state) {
        state.calls = [c].concat((state.calls || []).filter(function (x) { return x.number !== c.number; }));
        state.version = c.version;
      }
      highlightUntil = Date.now() + 8000;
      renderSoon(true);
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

  window.addEventListener("resize", function () { page = 0; render(); });
  document.addEventListener("keydown", function (e) { if (e.key === "ArrowRight") turnPage(); });
  setInterval(turnPage, PAGE_MS);
  connect();
  render();
  setInterval(tick, 1000);
  setInterval(watch, 250);
  if (rotate > 0) setInterval(next, rotate * 1000);
  tick();
})();
