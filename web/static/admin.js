// The admin page: the staff accounts, for an admin. It lists them from
// /admin/api/accounts and changes them with one POST each, carrying the
// session's CSRF token; every refusal is said in place, in the person's
// language, with the server's reason.
(function () {
  "use strict";
  var W = {
    en: {
      title: "Staff accounts", counterPage: "Counter page", accounts: "Accounts", name: "Name",
      role: "Role", sites: "Sites", counters: "Counters", status: "Status", add: "Add an account",
      password: "Password (8 to 256 characters)", sitesHint: "Sites (comma-separated; empty: every site)",
      countersHint: "Counters (comma-separated)", addGo: "Add", newPassword: "New password (8 to 256 characters)",
      save: "Save", counter: "counter", supervisor: "supervisor", admin: "admin",
      active: "active", disabled: "disabled", all: "all", none: "—", you: "(you)",
      setPassword: "Password…", editAccess: "Access…", disable: "Disable", enable: "Enable",
      passwordOf: "New password for {n}", accessOf: "Access of {n}", known: "Sites and counters: {p}",
      ok_create: "Account {n} added.", ok_password: "Password of {n} changed; their sessions ended.",
      ok_access: "Access of {n} changed.", ok_disable: "{n} disabled; their sessions ended.", ok_enable: "{n} enabled again.",
      e_bad_request: "Not accepted: {d}", e_bad_password: "The password must be 8 to 256 characters.",
      e_account_exists: "An account of that name exists already.", e_unknown_account: "There is no such account.",
      e_self: "You cannot disable your own account or take the admin role from it.",
      e_forbidden_role: "Only admins may manage accounts.", sending: "Sending…"
    },
    zh: {
      title: "员工账户", counterPage: "窗口页面", accounts: "账户", name: "用户名",
      role: "角色", sites: "站点", counters: "窗口", status: "状态", add: "添加账户",
      password: "密码（8 至 256 个字符）", sitesHint: "站点（逗号分隔；留空：所有站点）",
      countersHint: "窗口（逗号分隔）", addGo: "添加", newPassword: "新密码（8 至 256 个字符）",
      save: "保存", counter: "窗口", supervisor: "主管", admin: "管理员",
      active: "启用", disabled: "已停用", all: "全部", none: "—", you: "（您）",
      setPassword: "密码…", editAccess: "权限…", disable: "停用", enable: "启用",
      passwordOf: "为 {n} 设置新密码", accessOf: "{n} 的权限", known: "站点与窗口：{p}",
      ok_create: "已添加账户 {n}。", ok_password: "{n} 的密码已更改，其会话已结束。",
      ok_access: "{n} 的权限已更改。", ok_disable: "{n} 已停用，其会话已结束。", ok_enable: "{n} 已重新启用。",
      e_bad_request: "未接受：{d}", e_bad_password: "密码须为 8 至 256 个字符。",
      e_account_exists: "该用户名已存在。", e_unknown_account: "没有这个账户。",
      e_self: "不能停用自己的账户，也不能取消自己的管理员角色。",
      e_forbidden_role: "只有管理员可以管理账户。", sending: "正在发送…"
    },
    pt: {
      title: "Contas de funcionários", counterPage: "Página do balcão", accounts: "Contas", name: "Nome",
      role: "Função", sites: "Locais", counters: "Balcões", status: "Estado", add: "Adicionar uma conta",
      password: "Senha (8 a 256 caracteres)", sitesHint: "Locais (separados por vírgulas; vazio: todos)",
      countersHint: "Balcões (separados por vírgulas)", addGo: "Adicionar", newPassword: "Nova senha (8 a 256 caracteres)",
      save: "Guardar", counter: "balcão", supervisor: "supervisor", admin: "administrador",
      active: "ativa", disabled: "desativada", all: "todos", none: "—", you: "(você)",
      setPassword: "Senha…", editAccess: "Acesso…", disable: "Desativar", enable: "Ativar",
      passwordOf: "Nova senha de {n}", accessOf: "Acesso de {n}", known: "Locais e balcões: {p}",
      ok_create: "Conta {n} adicionada.", ok_password: "Senha de {n} alterada; as sessões terminaram.",
      ok_access: "Acesso de {n} alterado.", ok_disable: "{n} desativada; as sessões terminaram.", ok_enable: "{n} ativada de novo.",
      e_bad_request: "Não aceite: {d}", e_bad_password: "A senha deve ter de 8 a 256 caracteres.",
      e_account_exists: "Já existe uma conta com esse nome.", e_unknown_account: "Essa conta não existe.",
      e_self: "Não pode desativar a sua própria conta nem retirar-lhe a função de administrador.",
      e_forbidden_role: "Só administradores gerem contas.", sending: "A enviar…"
    }
  };
  var roles = ["counter", "supervisor", "admin"];
  var S = NowServingStaff, lang = S.pickLang(W), t = S.words(W, function () { return lang; }), say = S.say;
  var list = null, current = null, pending = false;
  function $(id) { return document.getElementById(id); }
  function refusal(p) { return S.refusal(t, W, p); }
  function api(path, body) { return S.api(path, body, function () { return list ? list.csrf : ""; }); }
  function split(s) {
    return s.split(",").map(function (x) { return x.trim(); }).filter(function (x) { return x; });
  }
  // roleOptions offers the roles in sel; to the admin's own account only
  // admin, since the server refuses to take it from them (as it refuses to
  // disable them: no such button either).
  function roleOptions(sel, self) {
    sel.textContent = "";
    roles.forEach(function (r) { if (!self || r === "admin") sel.appendChild(new Option(t(r), r)); });
  }
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function button(label, id, fn, cls) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.id = id;
    if (cls) b.className = cls;
    b.addEventListener("click", fn);
    return b;
  }
  function render() {
    var tb = document.querySelector("#accounts tbody");
    tb.textContent = "";
    list.accounts.forEach(function (a) {
      var tr = document.createElement("tr");
      tr.dataset.name = a.name;
      if (a.disabled) tr.className = "off";
      var n = cell(tr, a.name, "n");
      n.setAttribute("data-label", t("name"));
      if (a.name === list.me) n.appendChild(document.createTextNode(" " + t("you")));
      cell(tr, t(a.role)).setAttribute("data-label", t("role"));
      cell(tr, a.sites.length ? a.sites.join(", ") : t("all")).setAttribute("data-label", t("sites"));
      cell(tr, a.counters.length ? a.counters.join(", ") : t("none")).setAttribute("data-label", t("counters"));
      var st = cell(tr, t(a.disabled ? "disabled" : "active"));
      st.setAttribute("data-label", t("status"));
      st.className = "st " + (a.disabled ? "st-off" : "st-on");
      var td = document.createElement("td"), acts = document.createElement("div");
      td.className = "acts";
      acts.className = "bar";
      td.appendChild(acts);
      acts.appendChild(button(t("setPassword"), "pw-" + a.name, function () { openPassword(a); }));
      acts.appendChild(button(t("editAccess"), "ac-" + a.name, function () { openAccess(a); }));
      if (a.disabled) acts.appendChild(button(t("enable"), "en-" + a.name, function () { change(a, "enable", {}); }));
      else if (a.name !== list.me) acts.appendChild(button(t("disable"), "di-" + a.name, function () { change(a, "disable", {}); }, "danger"));
      tr.appendChild(td);
      tb.appendChild(tr);
    });
    $("places").textContent = t("known", { p: list.sites.map(function (s) { return s.id + " (" + s.counters.join(", ") + ")"; }).join("; ") });
    document.body.dataset.ready = "1";
    document.body.dataset.accounts = String(list.accounts.length);
  }
  function load() {
    return api("/admin/api/accounts").then(function (r) {
      if (!r.ok) { say(refusal(r.body), true); return; }
      list = r.body;
      $("user").textContent = list.me;
      $("logout-csrf").value = list.csrf;
      render();
    }, function () { say(t("e_network"), true); });
  }
  // send posts one change, then reads the list again and says the answer.
  function send(path, body, okKey, name) {
    if (pending) return Promise.resolve(false);
    pending = true;
    say(t("sending"));
    return api(path, body).then(function (r) {
      return load().then(function () {
        if (r.ok) say(t(okKey, { n: name }));
        else say(refusal(r.body), true);
        return r.ok;
      });
    }, function () { say(t("e_network"), true); return false; }).then(function (ok) { pending = false; return ok; });
  }
  function path(a, action) { return "/admin/api/accounts/" + encodeURIComponent(a.name) + "/" + action; }
  function change(a, action, body) { return send(path(a, action), body, "ok_" + action, a.name); }
  function openPassword(a) {
    current = a;
    $("dp-title").textContent = t("passwordOf", { n: a.name });
    $("new-password").value = "";
    $("d-password").showModal();
    $("new-password").focus();
  }
  function openAccess(a) {
    current = a;
    $("da-title").textContent = t("accessOf", { n: a.name });
    roleOptions($("access-role"), a.name === list.me);
    $("access-role").value = a.role;
    $("access-sites").value = a.sites.join(", ");
    $("access-counters").value = a.counters.join(", ");
    $("d-access").showModal();
    $("access-role").focus();
  }
  $("f-password").addEventListener("submit", function (e) {
    e.preventDefault();
    var pw = $("new-password").value;
    $("new-password").value = "";
    $("d-password").close();
    change(current, "password", { password: pw });
  });
  $("f-access").addEventListener("submit", function (e) {
    e.preventDefault();
    $("d-access").close();
    change(current, "access", { role: $("access-role").value, sites: split($("access-sites").value), counters: split($("access-counters").value) });
  });
  $("f-add").addEventListener("submit", function (e) {
    e.preventDefault();
    var name = $("add-name").value.trim();
    var body = { name: name, password: $("add-password").value, role: $("add-role").value,
      sites: split($("add-sites").value), counters: split($("add-counters").value) };
    send("/admin/api/accounts", body, "ok_create", name).then(function (ok) {
      $("add-password").value = "";
      if (ok) { $("add-name").value = ""; $("add-sites").value = ""; $("add-counters").value = ""; }
    });
  });
  S.closers();
  S.apply(t, lang);
  roleOptions($("add-role"));
  load();
})();
