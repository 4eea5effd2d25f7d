// The counter page: one person at one counter. It learns who it is from
// /counter/api/session, follows the site's public event stream
// (/display/{site}/events) and reads its counter's board again after each
// batch of changes, so it never shows a stale state. Each action is one
// POST with the session's CSRF token and an idempotency key made for the
// click: a double click sends nothing more while the first is under way,
// and a retry after a dropped connection sends the same key, so the
// engine answers the first result again and never calls twice.
(function () {
  "use strict";

  var W = {
    en: {
      title: "Counter", counter: "Counter", inHand: "Ticket in hand",
      next: "Call next", recall: "Recall", start: "Start", done: "Done", noshow: "No-show", transfer: "Transfer…",
      callNumber: "Call a number…", pause: "Pause", resume: "Resume", waiting: "Waiting",
      transferTitle: "Transfer the ticket", transferTo: "To", service: "Service", reason: "Reason",
      transferGo: "Transfer", callTitle: "Call a number", number: "Number", callGo: "Call",
      none: "No ticket", CALLED: "Called", SERVING: "Being served", calls: "called {n}×",
      open: "Open", paused: "Paused", closed: "Closed", modeIs: "Counter: {m}",
      nobody: "Nobody waiting.", more: "and {n} more", forYou: "for this counter",
      min: "{m} min", lessMin: "< 1 min",
      normal: "normal", vip: "VIP", emergency: "emergency", revisit: "revisit", appointment: "appointment", reentered: "re-entered",
      ok_next: "Called {n}.", ok_recall: "Called {n} again.", ok_start: "Serving {n}.", ok_done: "{n} done.",
      ok_noshow: "{n} marked no-show.", ok_transfer: "{n} transferred.", ok_call: "Called {n}.",
      ok_pause: "Counter paused.", ok_resume: "Counter open again.",
      notConnected: "not connected", connected: "connected", noCounters: "You have no counter to act at.", adminLink: "Accounts",
      sending: "Sending…", retrying: "Connection lost; trying again…",
      e_none_waiting: "Nobody is waiting for this counter.", e_counter_busy: "Finish the ticket in hand first (done, no-show or transfer).",
      e_counter_idle: "There is no ticket in hand.", e_counter_paused: "The counter is paused: resume it first.",
      e_invalid_transition: "Not possible in the ticket's state.", e_ticket_not_found: "No such ticket today.",
      e_forbidden_counter: "You may not act at this counter.", e_bad_request: "That was not understood: {d}",
      e_unknown_service: "No such service.", e_unknown_counter: "No such counter.", e_idempotency_key_reused: "Please try again.",
      e_busy: "The server is busy: try again.", e_store_unavailable: "The database is not answering: try again.",
      e_timeout: "The server did not answer in time: try again.", e_shutting_down: "The server is restarting: try again.",
      e_reentry_limit: "Re-entry limit reached."
    },
    zh: {
      title: "窗口", counter: "窗口", inHand: "当前号码",
      next: "叫下一位", recall: "重呼", start: "开始办理", done: "办结", noshow: "过号", transfer: "转移…",
      callNumber: "指定叫号…", pause: "暂停", resume: "恢复", waiting: "等候",
      transferTitle: "转移号码", transferTo: "转到", service: "业务", reason: "原因",
      transferGo: "转移", callTitle: "指定叫号", number: "号码", callGo: "呼叫",
      none: "无", CALLED: "已呼叫", SERVING: "办理中", calls: "已呼叫 {n} 次",
      open: "开放", paused: "暂停", closed: "关闭", modeIs: "窗口：{m}",
      nobody: "无人等候。", more: "另有 {n} 位", forYou: "指定本窗口",
      min: "{m} 分钟", lessMin: "不到 1 分钟",
      normal: "普通", vip: "VIP", emergency: "急诊", revisit: "复诊", appointment: "预约", reentered: "重新排队",
      ok_next: "已呼叫 {n}。", ok_recall: "已重呼 {n}。", ok_start: "正在办理 {n}。", ok_done: "{n} 已办结。",
      ok_noshow: "{n} 已过号。", ok_transfer: "{n} 已转移。", ok_call: "已呼叫 {n}。",
      ok_pause: "窗口已暂停。", ok_resume: "窗口已恢复。",
      notConnected: "未连接", connected: "已连接", noCounters: "您没有可操作的窗口。", adminLink: "账户",
      sending: "发送中…", retrying: "连接中断，正在重试…",
      e_none_waiting: "本窗口无人等候。", e_counter_busy: "请先处理当前号码（办结、过号或转移）。",
      e_counter_idle: "当前没有号码。", e_counter_paused: "窗口已暂停，请先恢复。",
      e_invalid_transition: "该号码当前状态下不能这样操作。", e_ticket_not_found: "今天没有这个号码。",
      e_forbidden_counter: "您无权操作此窗口。", e_bad_request: "无法识别：{d}",
      e_unknown_service: "没有此业务。", e_unknown_counter: "没有此窗口。", e_idempotency_key_reused: "请重试。",
      e_busy: "服务器繁忙，请重试。", e_store_unavailable: "数据库无响应，请重试。",
      e_timeout: "服务器响应超时，请重试。", e_shutting_down: "服务器正在重启，请重试。",
      e_reentry_limit: "已达重新排队次数上限。"
    },
    pt: {
      title: "Balcão", counter: "Balcão", inHand: "Senha em atendimento",
      next: "Chamar próxima", recall: "Chamar de novo", start: "Iniciar", done: "Concluir", noshow: "Não compareceu",
      transfer: "Transferir…", callNumber: "Chamar número…", pause: "Pausar", resume: "Retomar", waiting: "Em espera",
      transferTitle: "Transferir a senha", transferTo: "Para", service: "Serviço", reason: "Motivo",
      transferGo: "Transferir", callTitle: "Chamar um número", number: "Número", callGo: "Chamar",
      none: "Nenhuma senha", CALLED: "Chamada", SERVING: "Em atendimento", calls: "chamada {n}×",
      open: "Aberto", paused: "Em pausa", closed: "Fechado", modeIs: "Balcão: {m}",
      nobody: "Ninguém em espera.", more: "e mais {n}", forYou: "para este balcão",
      min: "{m} min", lessMin: "< 1 min",
      normal: "normal", vip: "VIP", emergency: "urgência", revisit: "retorno", appointment: "marcação", reentered: "reentrada",
      ok_next: "{n} chamada.", ok_recall: "{n} chamada de novo.", ok_start: "A atender {n}.", ok_done: "{n} concluída.",
      ok_noshow: "{n} marcada como não compareceu.", ok_transfer: "{n} transferida.", ok_call: "{n} chamada.",
      ok_pause: "Balcão em pausa.", ok_resume: "Balcão aberto de novo.",
      notConnected: "sem ligação", connected: "ligado", noCounters: "Não tem nenhum balcão atribuído.", adminLink: "Contas",
      sending: "A enviar…", retrying: "Ligação perdida; a tentar de novo…",
      e_none_waiting: "Ninguém espera por este balcão.", e_counter_busy: "Termine primeiro a senha em atendimento.",
      e_counter_idle: "Não há senha em atendimento.", e_counter_paused: "O balcão está em pausa: retome-o primeiro.",
      e_invalid_transition: "Não é possível no estado da senha.", e_ticket_not_found: "Não há essa senha hoje.",
      e_forbidden_counter: "Não pode atuar neste balcão.", e_bad_request: "Pedido não compreendido: {d}",
      e_unknown_service: "Serviço inexistente.", e_unknown_counter: "Balcão inexistente.", e_idempotency_key_reused: "Tente de novo.",
      e_busy: "O servidor está ocupado: tente de novo.", e_store_unavailable: "A base de dados não responde: tente de novo.",
      e_timeout: "O servidor não respondeu a tempo: tente de novo.", e_shutting_down: "O servidor está a reiniciar: tente de novo.",
      e_reentry_limit: "Limite de reentradas atingido."
    }
  };

  var params = new URLSearchParams(location.search);
  var S = NowServingStaff, lang = S.pickLang(W), t = S.words(W, function () { return lang; }), say = S.say;
  var me = null, site = null, counter = null, board = null, es = null, pending = false, reading = false, again = false;

  function $(id) { return document.getElementById(id); }
  function name(names, fallback) { return (names && (names[lang] || names[site.langs[0]])) || fallback; }
  function refusal(p) { return S.refusal(t, W, p); }

  function api(path, body) { return S.api(path, body, function () { return me.csrf; }); }

  function base() { return "/counter/api/" + encodeURIComponent(site.id) + "/" + encodeURIComponent(counter.id); }

  // act sends one action; a network failure is retried twice with the
  // same key (the engine answers a repeated key with the first result).
  function act(action, extra) {
    if (pending || !counter) return;
    pending = true;
    setButtons();
    var body = { key: S.key("web-") };
    for (var k in extra || {}) body[k] = extra[k];
    say(t("sending"));
    var sent = S.retry(function () { return api(base() + "/" + action, body); },
      function (n) { say(t("retrying"), true); return 500 * n; });
    // The answer is said once the board shows what it did.
    sent.then(function (r) {
      return read().then(function () {
        if (r.ok) say(t("ok_" + action, { n: r.body.ticket ? r.body.ticket.number : "" }));
        else say(refusal(r.body), true);
      });
    }, function () { say(t("e_network"), true); }).then(function () {
      pending = false;
      setButtons();
    });
  }

  // read fetches the board and resolves when it is shown; a read asked
  // for while one runs runs after it (and resolves with it).
  var waiters = [];
  function read() {
    if (!counter) return Promise.resolve();
    var p = new Promise(function (res) { waiters.push(res); });
    if (reading) { again = true; return p; }
    reading = true;
    var mine = waiters;
    waiters = [];
    api(base()).then(function (r) {
      if (r.ok) { board = r.body; render(); }
      else say(refusal(r.body), true);
    }, function () { setConn(false); }).then(function () {
      reading = false;
      mine.forEach(function (f) { f(); });
      if (again) { again = false; read().then(function () {}); }
    });
    return p;
  }

  function setConn(ok) {
    var c = $("conn");
    c.className = "conn " + (ok ? "ok" : "down");
    c.setAttribute("aria-label", t(ok ? "connected" : "notConnected"));
    c.title = c.getAttribute("aria-label");
  }

  function follow() {
    if (es) es.close();
    es = new EventSource("/display/" + encodeURIComponent(site.id) + "/events");
    es.addEventListener("state", function () { setConn(true); read(); });
    es.addEventListener("ping", function () { setConn(true); });
    es.onerror = function () { setConn(false); };
  }

  function wait(s) {
    var m = Math.floor(s / 60);
    return m < 1 ? t("lessMin") : t("min", { m: m });
  }

  function serviceName(code) {
    for (var i = 0; i < site.services.length; i++) if (site.services[i].code === code) return name(site.services[i].names, code);
    return code;
  }

  function setButtons() {
    var tk = board && board.ticket, mode = board ? board.mode : "open";
    var st = tk ? tk.status : "";
    var can = {
      next: !tk && mode === "open", call: !tk && mode === "open",
      recall: st === "CALLED", start: st === "CALLED", noshow: st === "CALLED",
      done: st === "SERVING", transfer: !!tk,
      pause: mode === "open", resume: mode !== "open"
    };
    var ids = { next: "a-next", call: "a-call", recall: "a-recall", start: "a-start", noshow: "a-noshow", done: "a-done",
      transfer: "a-transfer", pause: "a-pause", resume: "a-resume" };
    for (var a in ids) {
      var b = $(ids[a]);
      // aria-disabled, not disabled: the button keeps its focus and its
      // shortcut still answers, with the reason it cannot be done.
      b.setAttribute("aria-disabled", String(pending || !can[a]));
    }
  }

  function render() {
    var tk = board.ticket;
    $("number").textContent = tk ? tk.number : "—";
    $("number").className = "number" + (tk ? " " + tk.status.toLowerCase() : " idle");
    $("ticket-state").textContent = tk ? t(tk.status) : t("none");
    var meta = $("ticket-meta");
    meta.textContent = tk ? "· " + serviceName(tk.queue) + " · " : "";
    if (tk) {
      var cls = document.createElement("span");
      cls.className = "cls cls-" + tk.class;
      cls.textContent = t(tk.class);
      meta.appendChild(cls);
      if (tk.call_count > 1) meta.appendChild(document.createTextNode(" · " + t("calls", { n: tk.call_count })));
    }
    var mode = board.mode.toLowerCase();
    $("mode").textContent = t("modeIs", { m: t(mode) });
    $("mode").className = "mode " + mode;
    var q = $("queues");
    q.textContent = "";
    board.queues.forEach(function (sq) {
      var sec = document.createElement("section");
      var h = document.createElement("h3");
      h.textContent = serviceName(sq.service) + " · " + sq.waiting;
      sec.appendChild(h);
      if (!sq.tickets.length) {
        var p = document.createElement("p");
        p.className = "empty";
        p.textContent = t("nobody");
        sec.appendChild(p);
      } else {
        var ol = document.createElement("ol");
        sq.tickets.forEach(function (w) {
          var li = document.createElement("li");
          li.className = "cls-" + w.class;
          var n = document.createElement("span");
          n.className = "n";
          n.textContent = w.number;
          var c = document.createElement("span");
          c.className = "c";
          var cls = document.createElement("span");
          cls.className = "cls";
          cls.textContent = t(w.class);
          c.appendChild(cls);
          if (w.for_counter) c.appendChild(document.createTextNode(" · " + t("forYou")));
          var m = document.createElement("span");
          m.className = "m";
          m.textContent = wait(w.waiting_s);
          li.appendChild(n); li.appendChild(c); li.appendChild(m);
          ol.appendChild(li);
        });
        sec.appendChild(ol);
        if (sq.waiting > sq.tickets.length) {
          var more = document.createElement("p");
          more.className = "empty";
          more.textContent = t("more", { n: sq.waiting - sq.tickets.length });
          sec.appendChild(more);
        }
      }
      q.appendChild(sec);
    });
    var tc = $("to-counters");
    if (!tc.children.length) {
      board.counters.forEach(function (c) {
        if (c.id === counter.id) return;
        tc.appendChild(new Option(name(c.names, c.id), "counter:" + c.id));
      });
    }
    setButtons();
    document.body.dataset.ready = "1";
    document.body.dataset.version = String(board.version);
  }

  function choose(siteID, counterID) {
    me.sites.forEach(function (s) {
      s.counters.forEach(function (c) {
        if (s.id === siteID && c.id === counterID) { site = s; counter = c; }
      });
    });
    if (!counter) { site = me.sites[0]; counter = site.counters[0]; }
    try { localStorage.setItem("nowserving.counter", site.id + "/" + counter.id); } catch (e) { /* private mode */ }
    $("pick").value = site.id + "/" + counter.id;
    $("counter-name").textContent = name(counter.names, counter.id);
    document.title = name(counter.names, counter.id) + " · nowserving";
    var ts = $("to-services");
    ts.textContent = "";
    ts.label = t("service");
    $("to-counters").label = t("counter");
    site.services.forEach(function (s) { ts.appendChild(new Option(name(s.names, s.code), "service:" + s.code)); });
    $("to-counters").textContent = "";
    board = null;
    follow();
    read();
  }

  function start() {
    S.apply(t, lang);
    api("/counter/api/session").then(function (r) {
      if (!r.ok) { say(refusal(r.body), true); return; }
      me = r.body;
      $("user").textContent = me.name;
      $("logout-csrf").value = me.csrf;
      $("admin-link").hidden = me.role !== "admin";
      if (!me.sites.length) { say(t("noCounters"), true); return; }
      var pick = $("pick");
      me.sites.forEach(function (s) {
        s.counters.forEach(function (c) {
          var label = name.call(null, c.names, c.id);
          pick.appendChild(new Option((me.sites.length > 1 ? s.id + " · " : "") + ((c.names && (c.names[lang] || c.names[s.langs[0]])) || label), s.id + "/" + c.id));
        });
      });
      if (pick.options.length > 1) pick.parentElement.hidden = false;
      var want = params.get("counter") || "";
      if (want && want.indexOf("/") < 0) want = me.sites[0].id + "/" + want;
      if (!want) { try { want = localStorage.getItem("nowserving.counter") || ""; } catch (e) { want = ""; } }
      var parts = want.split("/");
      site = me.sites[0];
      choose(parts[0], parts.slice(1).join("/"));
      pick.addEventListener("change", function () {
        var p = pick.value.split("/");
        choose(p[0], p.slice(1).join("/"));
      });
    }, function () { say(t("e_network"), true); });
  }

  // Buttons and dialogs.
  function disabled(b) { return b.getAttribute("aria-disabled") === "true"; }
  function press(b) {
    if (pending) return;
    if (disabled(b)) {
      var why = { "a-next": board && board.mode !== "open" ? "e_counter_paused" : "e_counter_busy", "a-call": board && board.mode !== "open" ? "e_counter_paused" : "e_counter_busy",
        "a-pause": "e_invalid_transition", "a-resume": "e_invalid_transition" }[b.id] || "e_counter_idle";
      if (board && board.ticket && b.id !== "a-next" && b.id !== "a-call") why = "e_invalid_transition";
      say(t(why), true);
      return;
    }
    if (b.dataset.action) act(b.dataset.action);
    else if (b.dataset.dialog) openDialog(b.dataset.dialog);
  }
  function openDialog(which) {
    var d = $("d-" + which);
    d.showModal();
    (which === "call" ? $("call-number") : $("to")).focus();
  }
  document.querySelectorAll(".buttons button").forEach(function (b) {
    b.addEventListener("click", function () { press(b); });
  });
  S.closers();
  $("f-call").addEventListener("submit", function (e) {
    e.preventDefault();
    var n = $("call-number").value.trim().toUpperCase();
    $("d-call").close();
    $("call-number").value = "";
    if (n) act("call", { number: n });
  });
  $("f-transfer").addEventListener("submit", function (e) {
    e.preventDefault();
    var to = $("to").value, i = to.indexOf(":");
    var body = { reason: $("reason").value.trim() };
    body[to.slice(0, i) === "service" ? "to_service" : "to_counter"] = to.slice(i + 1);
    if (!body.reason) delete body.reason;
    $("d-transfer").close();
    $("reason").value = "";
    act("transfer", body);
  });

  // Keyboard shortcuts: a letter alone, outside fields and dialogs.
  var keys = { n: "a-next", r: "a-recall", s: "a-start", d: "a-done", x: "a-noshow", t: "a-transfer", c: "a-call", p: "a-pause", o: "a-resume" };
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || document.querySelector("dialog[open]")) return;
    var id = keys[(e.key || "").toLowerCase()];
    if (!id) return;
    e.preventDefault();
    press($(id));
  });

  start();
})();
