// The kiosk page: big buttons for the site's services; a touch takes a
// ticket as this kiosk device (the engine's number, never one of its
// own), printed on the kiosk's printer or shown with its QR code. When
// the daemon's event stream is lost for 3 s the whole screen says "Out of
// service" and no button can be touched; it comes back by itself.
(function () {
  "use strict";
  var W = NowServingStaff.catalog("kiosk"); // static/words/kiosk.json
  var site = location.pathname.split("/")[2], params = new URLSearchParams(location.search);
  var device = params.get("device") || "", langs = (document.documentElement.getAttribute("data-langs") || "en").split(" ");
  var lang = W[params.get("lang")] ? params.get("lang") : (W[langs[0]] ? langs[0] : "en");
  var state = null, es = null, lost = null, busy = false, back = null, offset = 0, opening = null;
  function $(id) { return document.getElementById(id); }
  var S = NowServingStaff, t = S.words(W, function () { return lang; });
  function name(m, f) { return (m && (m[lang] || m[langs[0]])) || f; }
  function show(id) { ["provision", "choose", "checkin", "ticket"].forEach(function (s) { $(s).hidden = s !== id; }); }
  function api(path, body) {
    var o = { method: body ? "POST" : "GET", credentials: "same-origin", headers: { "X-Kiosk": "1" } };
    if (body) { o.headers["Content-Type"] = "application/json"; o.body = JSON.stringify(body); }
    return fetch("/kiosk/" + encodeURIComponent(site) + path, o).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, body: j }; });
    });
  }
  function q() { return "?device=" + encodeURIComponent(device); }
  // closedText says that service s is closed and, when its hours say,
  // when it opens ("Fechado agora · abre seg., 10:00"), in the site's
  // time zone and the language on screen.
  function closedText(s) {
    if (!s.opens) return t("closed");
    return t("closed") + " · " + nowServingT(lang, "opensAt", { t: nowServingWhen(s.opens, lang, state.tz, Date.now() + offset) });
  }
  // reopen reads the state again when the first service opens or closes
  // by its hours, so its button changes then without waiting for an event.
  function reopen() {
    clearTimeout(opening);
    var first = Math.min.apply(null, state.services.map(function (s) { return Date.parse(s.opens || s.closes) || Infinity; }));
    if (first < Infinity) opening = setTimeout(load, Math.min(Math.max(first - Date.now() - offset, 0) + 500, 2147483647));
  }
  function render() {
    if (!state) return;
    $("site-name").textContent = name(state.names, site);
    var nav = $("langs");
    nav.textContent = "";
    state.langs.forEach(function (l) {
      if (!W[l]) return;
      var b = document.createElement("button");
      b.textContent = { en: "English", zh: "中文", pt: "Português" }[l];
      b.lang = l;
      b.setAttribute("aria-pressed", String(l === lang));
      b.onclick = function () { lang = l; S.apply(t, lang); render(); };
      nav.appendChild(b);
    });
    var box = $("services");
    box.textContent = "";
    state.services.forEach(function (s) {
      var b = document.createElement("button");
      b.className = "service";
      b.dataset.service = s.code;
      var n = document.createElement("span"); n.className = "name"; n.textContent = name(s.names, s.code);
      var m = document.createElement("span"); m.className = "meta";
      var can = s.open && !s.full;
      m.textContent = !s.open ? closedText(s) : s.full ? t("full") :
        t("waiting", { n: s.waiting }) + " · " + (s.waiting ? t("about", { m: Math.max(1, Math.round(s.estimate_s / 60)) }) : t("noWait"));
      b.appendChild(n); b.appendChild(m);
      b.setAttribute("aria-disabled", String(!can));
      b.onclick = function () { if (can) take(s); };
      box.appendChild(b);
    });
    $("k-checkin").hidden = !state.check_in;
    reopen();
    document.body.dataset.ready = "1";
  }
  function key() { return S.key("kiosk-"); }
  function pause() { return 400; }
  function take(s) {
    if (busy) return;
    busy = true;
    var body = { service: s.code, key: key() };
    S.retry(function () { return api("/api/tickets" + q(), body); }, pause).then(function (r) {
      if (r.ok) { showTicket(r.body, s); return; }
      if (r.body.code !== "service_closed") { $("k-message").textContent = t("refused"); return; }
      // Closed by its hours since the page last read them: say until when.
      return load().then(function () { $("k-message").textContent = closedText(serviceOf(s.code)); });
    }, function () { $("k-message").textContent = t("refused"); }).then(function () { busy = false; });
  }
  function serviceOf(code) {
    var found = null;
    (state ? state.services : []).forEach(function (x) { if (x.code === code) found = x; });
    return found || { code: code, names: {} };
  }
  // showTicket shows the ticket the daemon issued (never a number of the
  // page's own), with its QR code when it did not print.
  function showTicket(body, s) {
    var tk = body.ticket;
    $("t-number").textContent = tk.number;
    $("t-service").textContent = name(s.names, s.code);
    $("t-appt").hidden = !body.appointment;
    $("t-appt").textContent = body.appointment ? t("appt", { t: body.appointment }) : "";
    $("t-ahead").textContent = t("ahead", { n: body.ahead });
    $("t-print").textContent = body.printed ? t("printed") : (body.status_url ? t("scan") : "");
    var img = $("t-qr");
    img.hidden = body.printed || !body.status_url;
    if (!img.hidden) img.src = "/kiosk/" + encodeURIComponent(site) + "/qr?number=" + encodeURIComponent(tk.number) + "&day=" + encodeURIComponent(tk.day);
    $("k-message").textContent = "";
    show("ticket");
    back = setTimeout(home, 15000);
  }

  // Check-in by booking code: on-screen keys of the code's alphabet (no
  // 0, 1, I, L, O), a keyboard or a scanner typing it, then one request
  // with its idempotency key (a retry checks in once).
  var code = "", alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
  function showCode() {
    $("ci-code").textContent = code.length > 4 ? code.slice(0, 4) + "-" + code.slice(4) : code;
    $("ci-go").setAttribute("aria-disabled", String(code.length !== 8));
  }
  function typeKey(c) {
    c = c.toUpperCase();
    if (alphabet.indexOf(c) < 0 || code.length >= 8) return;
    code += c;
    showCode();
  }
  function openCheckIn() { code = ""; showCode(); $("k-message").textContent = ""; show("checkin"); }
  function checkIn() {
    if (busy) return;
    if (code.length !== 8) { $("k-message").textContent = t("badCode"); return; }
    busy = true;
    var body = { code: code, key: key() };
    S.retry(function () { return api("/api/check-in" + q(), body); }, pause).then(function (r) {
      if (r.ok) { code = ""; showTicket(r.body, serviceOf(r.body.ticket.queue)); return; }
      var c = r.body.code;
      $("k-message").textContent = c === "booking_not_found" ? t("notFound") : c === "check_in_early" ? t("early", { t: r.body.detail }) :
        c === "check_in_late" ? t("late") : c === "appointment_state" ? t("apptState") : c === "bad_request" ? t("badCode") : t("refused");
    }, function () { $("k-message").textContent = t("refused"); }).then(function () { busy = false; });
  }
  alphabet.split("").forEach(function (c) {
    var b = document.createElement("button");
    b.textContent = c;
    b.dataset.key = c;
    b.onclick = function () { typeKey(c); };
    $("ci-keys").appendChild(b);
  });
  $("k-checkin").onclick = openCheckIn;
  $("ci-del").onclick = function () { code = code.slice(0, -1); showCode(); };
  $("ci-back").onclick = function () { $("k-message").textContent = ""; show("choose"); };
  $("ci-go").onclick = checkIn;
  document.addEventListener("keydown", function (e) {
    if ($("checkin").hidden || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Enter") { e.preventDefault(); checkIn(); } else if (e.key === "Backspace") { code = code.slice(0, -1); showCode(); } else if (e.key.length === 1) typeKey(e.key);
  });
  function home() { clearTimeout(back); show("choose"); $("t-back").blur(); }
  function load() {
    return api("/api/state" + q()).then(function (r) {
      if (r.ok) { state = r.body; offset = Date.parse(state.now) - Date.now(); render(); if ($("ticket").hidden && $("checkin").hidden) show("choose"); return; }
      if (r.body.code === "kiosk_not_provisioned") { $("p-device").value = device; show("provision"); }
    });
  }
  function outOfService(on) { $("oos").hidden = !on; document.body.dataset.oos = on ? "1" : "0"; }
  function follow() {
    es = new EventSource("/display/" + encodeURIComponent(site) + "/events");
    es.addEventListener("state", function () { clearTimeout(lost); lost = null; outOfService(false); load(); });
    es.onerror = function () { if (!lost) lost = setTimeout(function () { outOfService(true); }, 3000); };
  }
  $("t-back").onclick = home;
  $("f-provision").addEventListener("submit", function (e) {
    e.preventDefault();
    device = $("p-device").value.trim();
    api("/api/provision", { device: device, secret: $("p-secret").value }).then(function (r) {
      $("p-secret").value = "";
      if (!r.ok) { $("k-message").textContent = t("badSecret"); return; }
      history.replaceState(null, "", location.pathname + q());
      $("k-message").textContent = "";
      load();
    });
  });
  S.apply(t, lang);
  load().then(follow);
})();
