// Words of the pages in the site's main language (state.lang); languages
// not listed fall back to English. Names of sites, services and counters
// come from the configuration, not from here.
var NowServingWords = {
  en: {
    title: "Now serving", nowCalling: "Now calling", lastCalls: "Last calls", waiting: "Waiting",
    peopleAhead: "People ahead", estimatedWait: "Estimated wait", connecting: "Connecting\u2026",
    next: "You are next.", pleaseWait: "Please wait; we will call your number.",
    called: "You are being called to counter {c}", serving: "Being served at counter {c}",
    done: "Thank you for your visit.", noShow: "You missed your call. Please ask at the reception.",
    other: "This ticket is {s}.", lessMinute: "less than a minute", aboutMin: "about {m} min",
    notFound: "No ticket {n} today."
  },
  zh: {
    title: "\u53eb\u53f7", nowCalling: "\u6b63\u5728\u547c\u53eb", lastCalls: "\u6700\u8fd1\u547c\u53eb", waiting: "\u7b49\u5019\u4eba\u6570",
    peopleAhead: "\u524d\u9762\u4eba\u6570", estimatedWait: "\u9884\u8ba1\u7b49\u5019", connecting: "\u8fde\u63a5\u4e2d\u2026",
    next: "\u4e0b\u4e00\u4f4d\u5c31\u662f\u60a8\u3002", pleaseWait: "\u8bf7\u7a0d\u5019\uff0c\u6211\u4eec\u4f1a\u53eb\u60a8\u7684\u53f7\u7801\u3002",
    called: "\u8bf7\u5230 {c} \u53f7\u7a97\u53e3", serving: "\u6b63\u5728 {c} \u53f7\u7a97\u53e3\u529e\u7406",
    done: "\u8c22\u8c22\u5149\u4e34\u3002", noShow: "\u60a8\u5df2\u8fc7\u53f7\uff0c\u8bf7\u5230\u670d\u52a1\u53f0\u54a8\u8be2\u3002",
    other: "\u6b64\u53f7\u7801\u72b6\u6001\uff1a{s}", lessMinute: "\u4e0d\u5230 1 \u5206\u949f", aboutMin: "\u7ea6 {m} \u5206\u949f",
    notFound: "\u4eca\u5929\u6ca1\u6709 {n} \u53f7\u3002"
  }
};

// nowServingT returns the word key in lang with {x} replaced from args.
function nowServingT(lang, key, args) {
  var base = (lang || "en").split("-")[0];
  var dict = NowServingWords[base] || NowServingWords.en;
  var s = dict[key] || NowServingWords.en[key] || key;
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
