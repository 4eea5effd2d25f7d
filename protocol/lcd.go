package protocol

import (
	"fmt"

	"github.com/nowserving/nowserving/internal/words"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// lcdWords are a keypad's LCD words in one language; lcdWordsFor falls
// back to English for a language not here.
type lcdWords struct {
	counter                                         string // a counter without a name: "Counter %s"
	waiting                                         string // "%d waiting"
	paused, open                                    string
	noShow, serving, done, back, cancelled, calling string // after the ticket number
}

var lcdLangs = map[string]lcdWords{
	"en": {counter: "Counter %s", waiting: "%d waiting", paused: "paused", open: "open",
		noShow: "no-show", serving: "serving", done: "done", back: "back", cancelled: "cancelled"},
	"zh": {counter: "%s号窗口", waiting: "等候 %d 人", paused: "暂停", open: "开放",
		noShow: "过号", serving: "办理中", done: "完成", back: "重新排队", cancelled: "已取消"},
	"pt": {counter: "Guichê %s", waiting: "%d aguardando", paused: "pausado", open: "aberto",
		noShow: "ausente", serving: "atendendo", done: "concluído", back: "de volta", cancelled: "cancelado"},
}

func lcdWordsFor(lang string) lcdWords {
	if w, ok := lcdLangs[words.Base(lang)]; ok {
		return w
	}
	return lcdLangs["en"]
}

// lcdLang is the language of a keypad's LCD lines: its device's lang
// (read at each answer, so a reload applies at once), else the site's
// main language.
func (ss *session) lcdLang(site *queue.Site) string {
	if d, ok := ss.srv.device(ss.dev.ID); ok && d.Lang != "" {
		return d.Lang
	}
	return site.Lang()
}

// lcdCounter is the counter's name on the LCD in lang: its name there
// (queue.Site.PickName's fallbacks), else "Counter 5" in lang's words.
func lcdCounter(site *queue.Site, counter, lang string) string {
	return site.CounterName(counter, lang, fmt.Sprintf(lcdWordsFor(lang).counter, counter))
}

// lcdFirst is the first LCD line for a keypad after action t on ticket
// tk, in lang.
func lcdFirst(t wire.MsgType, tk *queue.Ticket, counter, lang string) string {
	w := lcdWordsFor(lang)
	switch t {
	case wire.TypeNoShow:
		return tk.Number + " " + w.noShow
	case wire.TypeStart:
		return tk.Number + " " + w.serving
	case wire.TypeComplete:
		return tk.Number + " " + w.done
	case wire.TypeTransfer:
		if tk.TargetCounter != "" {
			return fmt.Sprintf("%s => %s", tk.Number, tk.TargetCounter)
		}
		return fmt.Sprintf("%s => %s", tk.Number, tk.Queue)
	case wire.TypeReenter:
		return tk.Number + " " + w.back
	case wire.TypeCancel:
		return tk.Number + " " + w.cancelled
	}
	return fmt.Sprintf("%s -> %s", tk.Number, counter)
}

// lcdWaiting is the LCD line counting what the counter has waiting.
func lcdWaiting(n int, lang string) string { return fmt.Sprintf(lcdWordsFor(lang).waiting, n) }
