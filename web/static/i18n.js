// Words of the pages in each language a site may use, from words/display.json:
// the daemon serves this file with "var NowServingWords = {...};" in front
// (web/lang.go). A site language not there falls back to English (the
// daemon logs it at start). Names of sites, services and counters come
// from the configuration, not from here. Every language has every key of
// en (checked by TestCatalogs).

// nowServingBase is the language of NowServingWords that speaks lang
// ("pt-BR" → "pt"), "en" when none does.
function nowServingBase(lang) {
  var base = (lang || "en").toLowerCase().split("-")[0];
  return NowServingWords[base] ? base : "en";
}

// nowServingT returns the word key in lang with {x} replaced from args.
function nowServingT(lang, key, args) {
  var s = NowServingWords[nowServingBase(lang)][key] || NowServingWords.en[key] || key;
  return s.replace(/\{(\w)\}/g, function (_, k) { return args && args[k] !== undefined ? String(args[k]) : ""; });
}

// nowServingApply sets every element with data-word to its word in lang.
function nowServingApply(lang) {
  var els = document.querySelectorAll("[data-word]");
  for (var i = 0; i < els.length; i++) {
    els[i].textContent = nowServingT(lang, els[i].getAttribute("data-word"));
  }
  document.documentElement.lang = lang || "en";
}

// nowServingLangs are the page's languages: the one ?lang= names when it
// is among the site's (or has words here), else the site's languages from
// the page's data-langs, main first.
function nowServingLangs() {
  var site = (document.documentElement.getAttribute("data-langs") || "en").split(" ");
  var want = new URLSearchParams(location.search).get("lang");
  if (want && (site.indexOf(want) >= 0 || NowServingWords[want])) return [want];
  return site;
}

// nowServingName is names[lang], else fallback.
function nowServingName(names, lang, fallback) {
  return (names && names[lang]) || fallback;
}

// nowServingWhen is instant iso as a site in time zone tz says it in
// lang, at nowMs (the daemon's clock): "10:00" today, "Mon 10:00" later
// this week, with the date beyond.
function nowServingWhen(iso, lang, tz, nowMs) {
  var at = new Date(iso), o = { hour: "2-digit", minute: "2-digit" };
  var day = function (d) {
    try { return d.toLocaleDateString("en-CA", tz ? { timeZone: tz } : {}); } catch (e) { return d.toDateString(); }
  };
  if (tz) o.timeZone = tz;
  if (day(at) !== day(new Date(nowMs))) o.weekday = "short";
  if (at - nowMs > 6 * 86400000) { o.day = "numeric"; o.month = "short"; }
  try { return at.toLocaleString(lang, o); } catch (e) { return at.toLocaleString(); }
}
