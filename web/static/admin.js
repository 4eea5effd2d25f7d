// The admin page: the staff accounts, for an admin. It lists them from
// /admin/api/accounts and changes them with one POST each, carrying the
// session's CSRF token; every refusal is said in place, in the person's
// language, with the server's reason.
(function () {
  "use strict";
  var W = NowServingStaff.catalog("admin"); // static/words/admin.json
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
