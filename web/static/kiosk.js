// The kiosk page: big buttons for the site's services; a touch takes a
// ticket as this kiosk device (the engine's number, never one of its
// own), printed on the kiosk's printer or shown with its QR code. When
// the daemon's event stream is lost for 3 s the whole screen says "Out of
// service" and no button can be touched; it comes back by itself.
(function () {
  "use strict";
  var W = {
    en: { choose: "Touch a service to take a ticket", yourNumber: "Your number", back: "Done", oos: "Out of service",
      oosHint: "Please ask at the reception.", waiting: "{n} waiting", about: "about {m} min", noWait: "no wait",
      closed: "Closed now", full: "Full today", ahead: "People ahead: {n}", printed: "Please take your printed ticket.",
      scan: "Scan the code to follow your place in the queue.", provisionTitle: "Set up this kiosk", device: "Device id",
      secret: "Device secret", provision: "Set up", refused: "Not possible now. Please ask at the reception.",
      badSecret: "Wrong device or secret." },
    zh: { choose: "请点击业务取号", yourNumber: "您的号码", back: "完成", oos: "暂停服务", oosHint: "请到服务台咨询。",
      waiting: "{n} 人等候", about: "约 {m} 分钟", noWait: "无需等候", closed: "当前未开放", full: "今日已满",
      ahead: "前面还有 {n} 人", printed: "请取走打印的号票。", scan: "扫码查看排队进度。", provisionTitle: "设置此取号机",
      device: "设备编号", secret: "设备密钥", provision: "设置", refused: "暂时无法取号，请到服务台咨询。", badSecret: "设备或密钥错误。" },
    pt: { choose: "Toque num serviço para tirar senha", yourNumber: "A sua senha", back: "Concluído", oos: "Fora de serviço",
      oosHint: "Dirija-se à receção.", waiting: "{n} em espera", about: "cerca de {m} min", noWait: "sem espera",
      closed: "Fechado agora", full: "Esgotado hoje", ahead: "Pessoas à frente: {n}", printed: "Retire a sua senha impressa.",
      scan: "Leia o código para acompanhar a sua vez.", provisionTitle: "Configurar este quiosque", device: "Identificador",
      secret: "Segredo do dispositivo", provision: "Configurar", refused: "Não é possível agora. Dirija-se à receção.",
      badSecret: "Dispositivo ou segredo errado." }
  };
  var site = location.pathname.split("/")[2], params = new URLSearchParams(location.search);
  var device = params.get("device") || "", langs = (document.documentElement.getAttribute("data-langs") || "en").split(" ");
  var lang = W[params.get("lang")] ? params.get("lang") : (W[langs[0]] ? langs[0] : "en");
  var state = null, es = null, lost = null, busy = false, back = null;
  function $(id) { return document.getElementById(id); }
  function t(k, a) { return (W[lang][k] || W.en[k]).replace(/\{(\w)\}/g, function (_, x) { return a ? a[x] : ""; }); }
  function name(m, f) { return (m && (m[lang] || m[langs[0]])) || f; }
  function show(id) { ["provision", "choose", "ticket"].forEach(function (s) { $(s).hidden = s !== id; }); }
  function words() {
    document.querySelectorAll("[data-w]").forEach(function (e) { e.textContent = t(e.getAttribute("data-w")); });
    document.documentElement.lang = lang;
  }
  function api(path, body) {
    var o = { method: body ? "POST" : "GET", credentials: "same-origin", headers: { "X-Kiosk": "1" } };
    if (body) { o.headers["Content-Type"] = "application/json"; o.body = JSON.stringify(body); }
    return fetch("/kiosk/" + encodeURIComponent(site) + path, o).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, body: j }; });
    });
  }
  function q() { return "?device=" + encodeURIComponent(device); }
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
      b.onclick = function () { lang = l; words(); render(); };
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
      m.textContent = !s.open ? t("closed") : s.full ? t("full") :
        t("waiting", { n: s.waiting }) + " · " + (s.waiting ? t("about", { m: Math.max(1, Math.round(s.estimate_s / 60)) }) : t("noWait"));
      b.appendChild(n); b.appendChild(m);
      b.setAttribute("aria-disabled", String(!can));
      b.onclick = function () { if (can) take(s); };
      box.appendChild(b);
    });
    document.body.dataset.ready = "1";
  }
  function key() {
    var a = new Uint8Array(16); crypto.getRandomValues(a);
    return "kiosk-" + Array.prototype.map.call(a, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }
  function take(s) {
    if (busy) return;
    busy = true;
    var body = { service: s.code, key: key() }, tries = 0;
    function send() {
      return api("/api/tickets" + q(), body).catch(function (e) { if (++tries > 2) throw e; return new Promise(function (r) { setTimeout(r, 400); }).then(send); });
    }
    send().then(function (r) {
      if (!r.ok) { $("k-message").textContent = t("refused"); return; }
      var tk = r.body.ticket;
      $("t-number").textContent = tk.number;
      $("t-service").textContent = name(s.names, s.code);
      $("t-ahead").textContent = t("ahead", { n: r.body.ahead });
      $("t-print").textContent = r.body.printed ? t("printed") : (r.body.status_url ? t("scan") : "");
      var img = $("t-qr");
      img.hidden = r.body.printed || !r.body.status_url;
      if (!img.hidden) img.src = "/kiosk/" + encodeURIComponent(site) + "/qr?number=" + encodeURIComponent(tk.number) + "&day=" + encodeURIComponent(tk.day);
      $("k-message").textContent = "";
      show("ticket");
      back = setTimeout(home, 15000);
    }, function () { $("k-message").textContent = t("refused"); }).then(function () { busy = false; });
  }
  function home() { clearTimeout(back); show("choose"); $("t-back").blur(); }
  function load() {
    return api("/api/state" + q()).then(function (r) {
      if (r.ok) { state = r.body; render(); if ($("ticket").hidden) show("choose"); return; }
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
  words();
  load().then(follow);
})();
