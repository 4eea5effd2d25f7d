package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/tui"
)

// consoleFlags are the flags of the console subcommand.
type consoleFlags struct {
	config, addr, device, secret string
	sites                        []string
	counter                      string
	timeout                      time.Duration
	logFile                      string
	lang                         string
}

func newConsoleCmd() *cobra.Command {
	f := &consoleFlags{}
	cmd := &cobra.Command{
		Use:   "console",
		Short: "The supervisor's terminal console: every queue and counter live, and the power to act",
		Long: `console connects to the daemon over the device protocol with a console
device and shows every service, counter and event of its site(s) live.
Keys: n call next, c call a number, r recall, s start, d done, x no-show,
t transfer, X cancel, e re-enter, p pause/resume, i issue a ticket,
/ filter events, tab or [ ] switch sites, ? help, q quit.

With --counter N it is the software keypad of counter N.

The console device comes from --config (the first device with role console,
or --device), or from --device and --secret alone. Without --config,
` + defaultSimConfig + ` is read when it exists.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConsole(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "YAML configuration: console device, site names, wait targets (default "+defaultSimConfig+" if present)")
	fl.StringVar(&f.addr, "addr", "", "daemon protocol address, or several separated by commas to fail over in order (default: the device's daemons in --config, else its listen.protocol, else "+defaultAddr+")")
	fl.StringVar(&f.device, "device", "", "console device id (default: the first console device of --config)")
	fl.StringVar(&f.secret, "secret", "", "device secret (default: from --config)")
	fl.StringSliceVar(&f.sites, "site", nil, "site(s) to watch, comma-separated or repeated (default: the device's site, or every configured site)")
	fl.StringVar(&f.counter, "counter", "", "software keypad for this counter number (of the first site)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "time-out of a dial or of one attempt of a request")
	fl.StringVar(&f.logFile, "log", "", "append connection events to this file (the screen is the console's)")
	fl.StringVar(&f.lang, "lang", "", "the one language of the screen: its words (zh, en, pt) and the names from --config (default: the console device's lang, else the site's first language)")
	return cmd
}

func runConsole(ctx context.Context, f *consoleFlags) error {
	cs, err := resolveConsole(f)
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("console: open log: %w", err)
		}
		defer lf.Close()
		log = slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	m := tui.New(tui.Opts{Sites: cs.sites, Addr: cs.addr, Counter: cs.counter, Lang: cs.lang})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx))
	done := make(chan struct{}, len(cs.sites))
	for i, so := range cs.sites {
		go func() {
			defer func() { done <- struct{}{} }()
			err := tui.RunSite(ctx, tui.SiteSession{
				Index: i, Site: so.Code, Send: p.Send,
				Dial: func(ctx context.Context, onState func(client.State, error)) (*client.Client, error) {
					return client.Dial(ctx, cs.addr, client.Opts{
						DeviceID: cs.deviceID, Secret: cs.secret, Role: wire.RoleConsole, Site: so.Code,
						Timeout: f.timeout, Firmware: "nowserving-console/1", OnState: onState, Logger: log,
					})
				},
			})
			if err != nil && ctx.Err() == nil {
				log.Warn("site session ended", "site", so.Code, "err", err)
			}
		}()
	}
	_, err = p.Run()
	cancel()
	for range cs.sites {
		<-done
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// consoleCounter checks --counter: a counter number, of the first site
// when the configuration is known.
func consoleCounter(arg string, cfg *config.Config, site string) (uint32, error) {
	n := queue.CounterNumber(arg)
	if n == 0 {
		return 0, fmt.Errorf("console: --counter %q: want a counter number, such as 5", arg)
	}
	if cfg == nil {
		return n, nil
	}
	s, ok := cfg.Site(site)
	if !ok {
		return n, nil
	}
	var ids []string
	for _, c := range s.Counters {
		if c.ID == arg {
			return n, nil
		}
		ids = append(ids, c.ID)
	}
	return 0, fmt.Errorf("console: site %s has no counter %s (its counters: %s)", s.ID, arg, strings.Join(ids, ", "))
}

func hasSite(cfg *config.Config, id string) bool { _, ok := cfg.Site(id); return ok }

// siteIDs lists the configured sites' ids.
func siteIDs(cfg *config.Config) string {
	ids := make([]string, 0, len(cfg.Sites))
	for _, s := range cfg.Sites {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ", ")
}
