// The supervisor's live dashboard: follows /dashboard/{site}/events and
// draws with the vendored uPlot (static/vendor/VERSIONS). Made to stay
// open all day on a wall screen: every array it keeps has a fixed length
// (the waiting line at most max_points points, hours 24, waits a bar per
// edge), charts are built once and given new data in place, and nothing
// grows with the events it hears.
(function () {
  "use strict";
  var W = NowServingStaff.catalog("dashboard"); // static/words/dashboard.json
  var COLORS = ["#1565c0", "#e65100", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#4e342e", "#37474f"];
  var site = decodeURIComponent(location.pathname.split("/")[2] || "");
  var lang = "en", dash = null, skew = 0, es = null;
  // The waiting line: xs and one array per service, at most max points.
  var max = 289, xs = [], ys = [];
  var charts = { line: null, arrivals: null, waits: null };
  var arrivalsData = [[], []], waitsData = [[], [], []];

  var S = NowServingStaff, t = S.words(W, function () { return lang; });
  function name(names, fallback) { return (names && (names[lang] || names[dash.lang])) || fallback; }
  function el(id) { return document.getElementById(id); }
  function now() { return Date.now() + skew; }
  function dur(s) {
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " " + t("min");
    return Math.floor(s / 3600) + " h " + String(Math.floor(s % 3600 / 60)).padStart(2, "0");
  }
  function since(iso) { return iso ? (now() - Date.parse(iso)) / 1000 : 0; }
  function fontPx() { return Math.round(Math.max(13, Math.min(22, window.innerWidth / 90))); }

  function pickLang(d) {
    var want = new URLSearchParams(location.search).get("lang");
    lang = want && (d.langs.indexOf(want) >= 0 || W[want]) ? want : d.lang;
    S.apply(t, lang);
  }

  function setConn(state) {
    var c = el("conn");
    c.className = "conn " + (state === "live" ? "on" : "off");
    c.textContent = t(state);
  }

  // push adds the newest point of the line, or replaces it when it is of
  // the same step; beyond max points the oldest goes.
  function push(p) {
    var n = xs.length;
    if (n > 0 && xs[n - 1] >= p.t) {
      for (var i = 0; i < ys.length; i++) ys[i][n - 1] = p.w[i] || 0;
      return;
    }
    xs.push(p.t);
    for (var j = 0; j < ys.length; j++) ys[j].push(p.w[j] || 0);
    while (xs.length > max) {
      xs.shift();
      for (var k = 0; k < ys.length; k++) ys[k].shift();
    }
  }

  function resetLine(d) {
    max = d.max_points;
    xs.length = 0;
    ys = d.services.map(function () { return []; });
    (d.series || []).forEach(push);
    push(d.point);
  }

  function axis(extra) {
    var f = fontPx();
    var a = { stroke: "#222", font: f + "px system-ui, sans-serif", labelFont: f + "px system-ui, sans-serif",
      grid: { stroke: "#ddd", width: 1 }, ticks: { stroke: "#bbb", width: 1 }, size: f * 3 };
    for (var k in extra) a[k] = extra[k];
    return a;
  }

  // box is the size for a chart in the element id: its box less the
  // legend's line under the plot.
  function box(id) {
    var b = el(id).getBoundingClientRect();
    return { width: Math.max(200, Math.floor(b.width)), height: Math.max(100, Math.floor(b.height - fontPx() * 2.2)) };
  }

  // labelHalf is half the width of a time label in the axes' font, and a
  // little more.
  function labelHalf() {
    var c = document.createElement("canvas").getContext("2d");
    c.font = axis({}).font;
    return Math.ceil(c.measureText(hhmm(Date.now() / 1000).replace(/\d/g, "8")).width / 2) + 4;
  }

  var hm = null;
  // hhmm is a Unix time as a 24-hour HH:MM at the site.
  function hhmm(ts) {
    if (!hm) hm = new Intl.DateTimeFormat(lang, { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: dash.tz });
    return hm.format(new Date(ts * 1000));
  }

  function buildLine(d) {
    hm = null;
    if (charts.line) charts.line.destroy();
    var size = box("line-chart");
    var series = [{}];
    d.services.forEach(function (s, i) {
      series.push({ label: name(s.names, s.code), stroke: COLORS[i % COLORS.length], width: 3,
        paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } });
    });
    charts.line = new uPlot({ width: size.width, height: size.height, series: series,
      // Room on the right for half the last time label, centred on the
      // plot's edge: uPlot's own guess is half the y axis, narrower than
      // "11:00" in some fonts (it was cut in Chinese at 1920×1080).
      padding: [null, labelHalf(), null, null],
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), d.tz); },
      scales: { x: { time: true }, y: { range: function (u, lo, hi) { return [0, Math.max(5, Math.ceil(hi * 1.15))]; } } },
      axes: [axis({ space: fontPx() * 5, values: function (u, v) { return v.map(hhmm); } }),
        axis({ values: function (u, v) { return v.map(function (x) { return Number.isInteger(x) ? x : ""; }); } })],
      // The colours are named by the swatches of the wait panel beside.
      cursor: { show: false }, legend: { show: false } }, [xs].concat(ys), el("line-chart"));
  }

  function bars(id, labels, series, data) {
    var size = box(id);
    var s = [{}];
    series.forEach(function (x) {
      s.push({ label: x.label, fill: x.color, stroke: x.color, width: 0,
        paths: uPlot.paths.bars({ size: [series.length > 1 ? 0.4 : 0.7, 200], align: x.align || 0 }), points: { show: false } });
    });
    return new uPlot({ width: size.width, height: size.height, series: s,
      scales: { x: { time: false, range: function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } },
        y: { range: function (u, lo, hi) { return [0, Math.max(4, Math.ceil(hi * 1.15))]; } } },
      axes: [axis({ splits: function () { return data[0].slice(); }, values: function (u, v) { return v.map(function (i) { return labels[i] || ""; }); }, grid: { show: false } }),
        axis({ values: function (u, v) { return v.map(function (x) { return Number.isInteger(x) ? x : ""; }); } })],
      cursor: { show: false }, legend: { show: series.length > 1, live: false } }, data, el(id));
  }

  function hourLabels() { var l = []; for (var h = 0; h < 24; h++) l.push(String(h).padStart(2, "0")); return l; }

  function drawArrivals(d) {
    var lo = 7, hi = 18;
    d.arrivals.forEach(function (n, h) { if (n > 0) { lo = Math.min(lo, h); hi = Math.max(hi, h); } });
    arrivalsData[0].length = 0; arrivalsData[1].length = 0;
    for (var h = lo; h <= hi; h++) { arrivalsData[0].push(h); arrivalsData[1].push(d.arrivals[h]); }
    if (!charts.arrivals || charts.arrivals.lo !== lo || charts.arrivals.hi !== hi) {
      if (charts.arrivals) charts.arrivals.destroy();
      charts.arrivals = bars("arrivals-chart", hourLabels(), [{ label: t("tickets"), color: "#1565c0" }], arrivalsData);
      charts.arrivals.lo = lo; charts.arrivals.hi = hi;
    } else {
      charts.arrivals.setData(arrivalsData);
    }
  }

  function drawWaits(d) {
    var w = d.waits, labels = [], total = 0, within = 0;
    waitsData[0].length = 0; waitsData[1].length = 0; waitsData[2].length = 0;
    w.edges_min.forEach(function (e, i) {
      labels.push(i + 1 < w.edges_min.length ? String(e) : e + "+");
      waitsData[0].push(i); waitsData[1].push(w.within[i]); waitsData[2].push(w.over[i]);
      total += w.within[i] + w.over[i]; within += w.within[i];
    });
    el("within").textContent = total > 0 ? "· " + t("withinShare", { p: Math.round(100 * within / total) }) : "";
    if (!charts.waits) {
      charts.waits = bars("waits-chart", labels, [{ label: t("within"), color: "#2e7d32", align: -1 },
        { label: t("over"), color: "#c62828", align: 1 }], waitsData);
    } else {
      charts.waits.setData(waitsData);
    }
  }

  // rows keeps one child of the element id per item: the extra ones go,
  // the missing ones are made as tag elements holding html; fill(row, item,
  // i) then sets each. The rows are made once and refilled in place.
  function rows(id, items, tag, html, fill) {
    var parent = el(id);
    while (parent.children.length > items.length) parent.removeChild(parent.lastChild);
    items.forEach(function (item, i) {
      var row = parent.children[i];
      if (!row) {
        row = document.createElement(tag);
        row.innerHTML = html;
        parent.appendChild(row);
      }
      fill(row, item, i);
    });
  }

  function drawTargets(d) {
    rows("targets", d.services, "li", '<span class="sw"></span><span class="nm"></span><span class="val"></span><span class="bar"><span class="fill"></span><span class="mark"></span></span><span class="sub"></span>', function (li, s, i) {
      var longest = s.oldest ? since(s.oldest) : 0, target = s.target_s;
      var breach = target > 0 && longest > target;
      li.className = breach ? "breach" : "";
      li.querySelector(".sw").style.background = COLORS[i % COLORS.length];
      li.querySelector(".nm").textContent = name(s.names, s.code);
      li.querySelector(".val").textContent = s.waiting > 0 ? dur(longest) : "—";
      var scale = Math.max(target * 1.5, longest, 60);
      li.querySelector(".fill").style.width = Math.min(100, 100 * longest / scale) + "%";
      var mark = li.querySelector(".mark");
      mark.hidden = !(target > 0);
      mark.style.left = (100 * target / scale) + "%";
      li.querySelector(".sub").textContent = (s.waiting > 0 ? t("waiting", { n: s.waiting }) : t("nobody")) + " · " +
        (target > 0 ? t("target", { t: dur(target) }) : t("noTarget")) + (breach ? " · " + t("overTarget") : "");
    });
  }

  function counterLine(c) {
    var d = dur(since(c.since));
    if (c.number) return t(c.status === "SERVING" ? "serving" : "called", { n: c.number, d: d });
    if (c.mode === "paused") return t("pausedFor", { d: d });
    if (c.mode === "closed") return t("closed");
    return t("idle", { d: d });
  }

  function drawCounters(d) {
    rows("counters", d.counters, "li", '<span class="nm"></span><span class="mode"></span><span class="now"></span><span class="cnt"></span>', function (li, c) {
      li.className = "c-" + c.mode + (c.number ? " busy" : "");
      li.querySelector(".nm").textContent = name(c.names, c.id);
      li.querySelector(".mode").textContent = t(c.mode) || c.mode;
      li.querySelector(".now").textContent = counterLine(c);
      li.querySelector(".cnt").textContent = t("served", { n: c.served });
    });
  }

  function drawBookings(d) {
    el("no-bookings").hidden = d.bookings.length > 0;
    rows("bookings", d.bookings, "tr", "<td></td><td></td><td></td><td></td>", function (tr, r) {
      var cells = tr.children, total = r.booked + r.checked_in + r.missed;
      cells[0].textContent = name(r.names, r.id);
      cells[1].textContent = total;
      cells[2].textContent = r.checked_in;
      cells[3].textContent = r.missed;
      cells[3].className = r.missed > 0 ? "missed" : "";
    });
  }

  function tick() {
    if (!dash) return;
    el("clock").textContent = new Date(now()).toLocaleTimeString(lang, { timeZone: dash.tz, hour: "2-digit", minute: "2-digit" });
    drawTargets(dash);
    drawCounters(dash);
  }

  function onDash(ev) {
    var d = JSON.parse(ev.data);
    var first = !dash || d.series || d.services.length !== ys.length || d.day !== dash.day;
    skew = Date.parse(d.now) - Date.now();
    dash = d;
    if (first) {
      pickLang(d);
      resetLine(d);
      buildLine(d);
      if (charts.waits) { charts.waits.destroy(); charts.waits = null; }
      if (charts.arrivals) { charts.arrivals.destroy(); charts.arrivals = null; }
    } else {
      push(d.point);
      charts.line.setData([xs].concat(ys));
    }
    el("site-name").textContent = name(d.names, d.site);
    el("served").textContent = d.served;
    drawArrivals(d);
    drawWaits(d);
    drawBookings(d);
    tick();
    setConn("live");
    document.body.dataset.version = d.version;
    document.body.dataset.ready = "1";
  }

  function connect() {
    es = new EventSource("/dashboard/" + encodeURIComponent(site) + "/events");
    es.addEventListener("dash", onDash);
    es.onopen = function () { setConn("live"); };
    es.onerror = function () {
      setConn("offline");
      if (es.readyState === EventSource.CLOSED) {
        // A refusal (the session ended): ask whether to log in again.
        fetch("/counter/api/session", { credentials: "same-origin" }).then(function (r) {
          if (r.status === 401) { el("conn").textContent = t("loginNeeded"); return; }
          setTimeout(connect, 5000);
        }, function () { setTimeout(connect, 5000); });
      }
    };
  }

  var resizing = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () {
      if (!dash) return;
      var all = [["line", "line-chart"], ["arrivals", "arrivals-chart"], ["waits", "waits-chart"]];
      all.forEach(function (c) { if (charts[c[0]]) charts[c[0]].setSize(box(c[1])); });
    }, 200);
  });
  // For tests and the curious: how much the page holds.
  el("reports").href = "/reports/" + encodeURIComponent(site) + location.search;
  window.nowservingDash = { points: function () { return xs.length; }, max: function () { return max; } };
  setInterval(tick, 1000);
  connect();
})();
