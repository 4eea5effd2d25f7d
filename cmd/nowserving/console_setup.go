package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/tui"
)

// consoleSetup is what the flags resolve to.
type consoleSetup struct {
	addr     string
	deviceID string
	secret   []byte
	sites    []tui.SiteOpts
	counter  uint32 // --counter: the software keypad's counter; 0: none
	lang     string // the one language of the screen
}

// resolveConsole reads the configuration and picks the device and sites.
func resolveConsole(f *consoleFlags) (_ *consoleSetup, err error) {
	var cfg *config.Config
	if file := sim.ConfigFile(f.config, f.device, f.secret); file != "" {
		c, err := config.Load(config.Opts{File: file, Client: true})
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		cfg = c
	}
	if f.secret != "" && f.device == "" {
		return nil, errors.New("console: --secret needs --device: say which device the secret is for")
	}
	cs := &consoleSetup{addr: sim.Addr(f.addr, cfg)}
	devSite := ""
	var daemons []string // the console's own devices[].daemons
	devLang := ""        // the console's own devices[].lang
	switch {
	case f.device != "" && f.secret != "":
		cs.deviceID, cs.secret = f.device, []byte(f.secret)
		if cfg != nil {
			if d, ok := cfg.Device(f.device); ok {
				devSite = d.Site
			}
		}
	case cfg == nil:
		return nil, errors.New("console: no console device: give --config, or --device and --secret")
	case f.device != "":
		d, ok := cfg.Device(f.device)
		if !ok {
			return nil, fmt.Errorf("console: device %q is not in the configuration", f.device)
		}
		cs.deviceID, cs.secret, devSite, daemons, devLang = d.ID, []byte(d.Secret), d.Site, d.Daemons, d.Lang
	default:
		for _, d := range cfg.Devices {
			if d.Role == config.RoleConsole {
				cs.deviceID, cs.secret, devSite, daemons, devLang = d.ID, []byte(d.Secret), d.Site, d.Daemons, d.Lang
				break
			}
		}
		if cs.deviceID == "" {
			return nil, errors.New("console: the configuration has no console device (devices: role: console)")
		}
	}
	if f.addr == "" && len(daemons) > 0 {
		cs.addr = strings.Join(daemons, ",")
	}
	var codes []string
	for _, s := range f.sites {
		if s = strings.TrimSpace(s); s != "" {
			codes = append(codes, s)
		}
	}
	switch {
	case len(codes) > 0:
	case devSite != "":
		codes = []string{devSite}
	case cfg != nil && len(cfg.Sites) > 0:
		for _, s := range cfg.Sites {
			codes = append(codes, s.ID)
		}
	default:
		codes = []string{""} // the daemon's only site
	}
	for _, code := range codes {
		if cfg != nil && code != "" && !hasSite(cfg, code) {
			return nil, fmt.Errorf("console: unknown site %q: the configuration has %s", code, siteIDs(cfg))
		}
	}
	cs.lang = consoleLang(f.lang, devLang, cfg, codes[0])
	for _, code := range codes {
		cs.sites = append(cs.sites, siteOpts(cfg, code, cs.lang))
	}
	if f.counter != "" {
		if cs.counter, err = consoleCounter(f.counter, cfg, codes[0]); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// consoleLang is the one language of the console's screen: --lang, else
// the console device's lang, else the first language of its (first)
// site, else English.
func consoleLang(flag, device string, cfg *config.Config, site string) string {
	switch {
	case flag != "":
		return flag
	case device != "":
		return device
	}
	if cfg != nil {
		if s, ok := cfg.Site(site); ok && len(s.Languages) > 0 {
			return s.Languages[0]
		}
		if site == "" && len(cfg.Sites) > 0 && len(cfg.Sites[0].Languages) > 0 {
			return cfg.Sites[0].Languages[0]
		}
	}
	return "en"
}

// pickName is the name of names for a screen in lang: in lang, else in
// the first of the site's languages that has one, else in any language
// (alphabetically first), else "" (the caller's default): the rule of
// queue.Site.PickName.
func pickName(names config.Names, lang string, s *config.Site) string {
	if n := names.Pick(append([]string{lang}, s.Languages...)...); n != "" {
		return n
	}
	langs := make([]string, 0, len(names))
	for l := range names {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	return names.Pick(langs...)
}

// siteOpts is what the configuration says of site code for the console,
// named in lang (pickName).
func siteOpts(cfg *config.Config, code, lang string) tui.SiteOpts {
	so := tui.SiteOpts{Code: code}
	if cfg == nil {
		return so
	}
	s, ok := cfg.Site(code)
	if !ok {
		return so
	}
	so.Name = pickName(s.Name, lang, s)
	so.Location = s.Location()
	so.Rollover = s.Rollover.Duration()
	for _, sv := range s.Services {
		so.Services = append(so.Services, tui.ServiceOpts{Code: sv.Code, Name: pickName(sv.Name, lang, s), WaitTarget: sv.WaitTarget})
	}
	for _, c := range s.Counters {
		id := queue.CounterNumber(c.ID)
		if id == 0 {
			continue
		}
		co := tui.CounterOpts{ID: id, Name: pickName(c.Name, lang, s)}
		for _, cs := range c.Services {
			co.Services = append(co.Services, cs.Service)
		}
		for _, d := range cfg.Devices {
			if d.Role == config.RoleKeypad && d.Site == s.ID && d.Counter == c.ID {
				co.Keypad = d.ID
				break
			}
		}
		so.Counters = append(so.Counters, co)
	}
	for _, r := range s.Resources {
		if n := pickName(r.Name, lang, s); n != "" {
			if so.Resources == nil {
				so.Resources = map[string]string{}
			}
			so.Resources[r.ID] = n
		}
	}
	return so
}
