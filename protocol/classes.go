package protocol

import (
	"slices"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// The ticket classes of the wire are the site's: the classes the protocol
// names (normal, vip, ...) keep their fixed values, a site's own classes
// (the bank example's "priority") get wire.ClassSiteFirst and up, in the
// order of their codes, and WELCOME.Classes tells a device both.

// classToWire are the fixed values of the classes PROTOCOL.md names.
var classToWire = map[queue.Class]wire.Class{
	queue.ClassNormal: wire.ClassNormal, queue.ClassVIP: wire.ClassVIP, queue.ClassEmergency: wire.ClassEmergency,
	queue.ClassRevisit: wire.ClassRevisit, queue.ClassAppointment: wire.ClassAppointment, queue.ClassReentered: wire.ClassReentered,
}

// classWords name the fixed classes where the configuration names none.
var classWords = map[queue.Class]string{
	queue.ClassNormal: "Normal", queue.ClassVIP: "VIP", queue.ClassEmergency: "Emergency",
	queue.ClassRevisit: "Revisit", queue.ClassAppointment: "Appointment", queue.ClassReentered: "Re-entered",
}

// siteClasses is the table of one site's classes on the wire.
type siteClasses struct {
	toWire   map[queue.Class]wire.Class
	fromWire map[wire.Class]queue.Class
	issuable []queue.Class // what a TAKE_TICKET may ask for, normal first, then by rank
}

// classesOf builds the class table of site.
func classesOf(site *queue.Site) *siteClasses {
	ranks := site.Ranks
	if len(ranks) == 0 {
		ranks = queue.DefaultRanks()
	}
	sc := &siteClasses{toWire: map[queue.Class]wire.Class{}, fromWire: map[wire.Class]queue.Class{}}
	for q, w := range classToWire {
		sc.toWire[q], sc.fromWire[w] = w, q
	}
	var own []queue.Class
	for c := range ranks {
		if _, fixed := classToWire[c]; !fixed {
			own = append(own, c)
		}
	}
	slices.Sort(own)
	for i, c := range own {
		if i > 0xFF-int(wire.ClassSiteFirst) {
			break // config allows far fewer; a class past 255 stays off the wire
		}
		w := wire.ClassSiteFirst + wire.Class(i)
		sc.toWire[c], sc.fromWire[w] = w, c
	}
	for c := range ranks {
		if _, ok := sc.toWire[c]; ok && c != queue.ClassNormal && c != queue.ClassReentered {
			sc.issuable = append(sc.issuable, c)
		}
	}
	slices.SortFunc(sc.issuable, func(a, b queue.Class) int {
		if ranks[a] != ranks[b] {
			return ranks[a] - ranks[b]
		}
		return compareClass(a, b)
	})
	sc.issuable = append([]queue.Class{queue.ClassNormal}, sc.issuable...)
	if _, ranked := ranks[queue.ClassRevisit]; !ranked {
		sc.issuable = append(sc.issuable, queue.ClassRevisit) // placed by position, always issuable
	}
	return sc
}

func compareClass(a, b queue.Class) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wireClass is the wire value of class c at site; normal for a class the
// site does not know.
func wireClass(site *queue.Site, c queue.Class) wire.Class {
	if w, ok := classToWire[c]; ok {
		return w
	}
	return classesOf(site).toWire[c]
}

// defs is what WELCOME tells a device of its site: languages, services and
// classes with their names.
func defs(site *queue.Site, w *wire.Welcome) {
	langs := site.Languages
	if len(langs) == 0 {
		langs = []string{site.Lang()}
	}
	w.Languages = langs
	names := func(m map[string]string, fallback string) []string {
		out := make([]string, len(langs))
		for i, l := range langs {
			out[i] = site.PickName(m, l, fallback)
		}
		return out
	}
	for _, sv := range site.Services {
		w.Services = append(w.Services, wire.ServiceDef{Code: sv.Code, Names: names(sv.Names, sv.Code)})
	}
	sc := classesOf(site)
	for _, c := range sc.issuable {
		fallback := classWords[c]
		if fallback == "" {
			fallback = string(c)
		}
		w.Classes = append(w.Classes, wire.ClassDef{Value: sc.toWire[c], Code: string(c), Names: names(site.ClassNames[c], fallback)})
	}
}
