// A report page's charts: bars drawn by the vendored uPlot from the JSON
// in #report-data (the tables under them are the page's HTML, so a
// report reads and prints without this script too).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var charts = [];

  function draw(el, c) {
    var box = el.getBoundingClientRect();
    var f = 13, n = c.labels.length, k = c.series.length;
    var xs = c.labels.map(function (_, i) { return i; });
    var series = [{}], values = [xs];
    c.series.forEach(function (s) {
      series.push({ label: s.label, fill: s.color, stroke: s.color, width: 0, points: { show: false }, paths: function () { return null; } });
      values.push(s.values);
    });
    if (c.target) {
      series.push({ label: c.target_label, stroke: "#111", dash: [6, 4], width: 3, points: { show: false }, paths: function () { return null; } });
      values.push(c.target);
    }
    // The bars, grouped per label, and the targets as dashed marks, drawn
    // here: uPlot's own bar paths do not group series.
    var hooks = { draw: [function (u) {
      var ctx = u.ctx, y0 = u.valToPos(0, "y", true);
      ctx.save();
      c.series.forEach(function (s, j) {
        ctx.fillStyle = s.color;
        s.values.forEach(function (v, i) {
          var x0 = u.valToPos(i - 0.4 + j * 0.8 / k, "x", true), x1 = u.valToPos(i - 0.4 + (j + 1) * 0.8 / k, "x", true);
          var y = u.valToPos(v, "y", true);
          ctx.fillRect(x0 + 1, y, Math.max(1, x1 - x0 - 2), y0 - y);
        });
      });
      ctx.strokeStyle = "#111";
      ctx.lineWidth = 3;
      ctx.setLineDash([6, 4]);
      (c.target || []).forEach(function (t, i) {
        if (!(t > 0)) return;
        var y = u.valToPos(t, "y", true), x0 = u.valToPos(i - 0.45, "x", true), x1 = u.valToPos(i + 0.45, "x", true);
        ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
      });
      ctx.restore();
    }] };
    var top = Math.max.apply(null, [1].concat(c.target || []).concat([].concat.apply([], c.series.map(function (s) { return s.values; }))));
    var font = f + "px system-ui, sans-serif";
    var axis = function (x) { var a = { font: font, stroke: "#222", grid: { stroke: "#e5e7eb" }, ticks: { stroke: "#ccc" } }; for (var key in x) a[key] = x[key]; return a; };
    return new uPlot({ width: Math.max(220, Math.floor(box.width)), height: 210, series: series, hooks: hooks,
      scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: [0, c.unit === "%" ? 100 : Math.ceil(top * 1.15)] } },
      axes: [axis({ splits: function () { return xs; }, grid: { show: false }, size: 36,
        values: function (u, v) { return v.map(function (i) { var l = c.labels[i] || ""; return l.length > 14 ? l.slice(0, 13) + "…" : l; }); } }),
        axis({ size: 56, values: function (u, v) { return v.map(function (x) { return x + (c.unit === "%" ? "%" : ""); }); } })],
      cursor: { show: false }, legend: { show: k > 1 || !!c.target, live: false } }, values, el);
  }

  function all() {
    charts.forEach(function (u) { u.destroy(); });
    charts = [];
    var els = document.querySelectorAll("[data-chart]");
    for (var i = 0; i < els.length; i++) {
      var c = data.charts[els[i].getAttribute("data-chart")];
      if (c && c.labels.length > 0) charts.push(draw(els[i], c));
    }
    document.body.dataset.ready = "1";
  }

  var p = document.getElementById("print");
  if (p) p.addEventListener("click", function () { window.print(); });
  var t = 0;
  window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(all, 200); });
  all();
})();
