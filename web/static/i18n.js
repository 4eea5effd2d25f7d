// Words of the pages in each language a site may use, from words.json:
// the daemon serves this file with "var NowServingWords = {...};" in front
// (web/lang.go). A site language not there falls back to English (the
// daemon logs it at start). Names of sites, services and counters come
// from the configuration, not from here. Every language has every key of
// en (checked by TestPageWords).

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
