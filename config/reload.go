package config

import "reflect"

// RestartOnly lists the sections a running daemon cannot change: a reload
// that changes one of them logs it and keeps the running value until the
// next start. Everything else (sites, devices and their secrets, LED
// boards, voice, printers, keypads, http) applies at the reload.
var RestartOnly = []string{"store", "listen", "log"}

// NeedsRestart names the sections of RestartOnly that differ between the
// running configuration and next.
func NeedsRestart(running, next *Config) []string {
	var out []string
	if !reflect.DeepEqual(running.Store, next.Store) {
		out = append(out, "store")
	}
	if !reflect.DeepEqual(running.Listen, next.Listen) {
		out = append(out, "listen")
	}
	if !reflect.DeepEqual(running.Log, next.Log) {
		out = append(out, "log")
	}
	return out
}

// HardwareChanged reports whether next drives the hall's hardware
// differently from running: LED lines and boards, voice zones, printers,
// wired keypads, which kiosk prints where, the ticket pages' address, or
// the sites (a counter's zone, names on boards and tickets).
func HardwareChanged(running, next *Config) bool {
	printers := func(c *Config) map[string]string {
		m := map[string]string{}
		for _, d := range c.Devices {
			if d.Printer != "" {
				m[d.ID] = d.Printer
			}
		}
		return m
	}
	return !reflect.DeepEqual(running.LED, next.LED) || !reflect.DeepEqual(running.Voice, next.Voice) ||
		!reflect.DeepEqual(running.Printers, next.Printers) || !reflect.DeepEqual(running.Keypads, next.Keypads) ||
		running.HTTP.PublicURL != next.HTTP.PublicURL || !reflect.DeepEqual(running.Sites, next.Sites) ||
		!reflect.DeepEqual(printers(running), printers(next))
}
