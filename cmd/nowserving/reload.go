package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/web"
)

// swapGrace bounds how long a reload waits for the old device dispatcher
// to finish its announcements and blank its boards.
const swapGrace = 10 * time.Second

// live is the part of a running daemon a reload changes.
type live struct {
	mu    sync.Mutex
	cfg   *config.Config // the running configuration
	eng   *queue.Engine
	proto *protocol.Server
	dev   *daemon.Devices
	web   *web.Server // nil without listen.http
	log   *slog.Logger
}

// reload applies next, a loaded and validated configuration, to the
// running daemon: sites (services, counters, hours, names), devices and
// their secrets, API tokens, and, when they changed, the LED boards, voice
// zones, printers and wired keypads (the dispatcher is rebuilt). A part
// that refuses next leaves everything as it was. Sections that need a
// restart (store, listen, log) are named in a warning and keep their
// running values.
func (l *live) reload(ctx context.Context, next *config.Config) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	devs, err := protocolDevices(next.Devices)
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	hw := config.HardwareChanged(l.cfg, next)
	old := l.eng.Sites()
	if err := l.eng.SetSites(sites(next)); err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	undo := func() { _ = l.eng.SetSites(old) }
	var nd *devices.Dispatcher
	if hw {
		if nd, err = buildDevices(next, l.eng, l.log); err != nil {
			undo()
			return fmt.Errorf("reload: %w", err)
		}
	}
	if l.web != nil {
		if err := l.web.SetTokens(webTokens(next)); err != nil {
			undo()
			return fmt.Errorf("reload: %w", err)
		}
	}
	closed, err := l.proto.SetDevices(devs)
	if err != nil {
		undo()
		if l.web != nil {
			_ = l.web.SetTokens(webTokens(l.cfg))
		}
		return fmt.Errorf("reload: %w", err)
	}
	if nd != nil {
		sctx, cancel := context.WithTimeout(ctx, swapGrace)
		err = l.dev.Swap(sctx, nd)
		cancel()
		if err != nil {
			l.log.Warn("reload: devices", "err", err)
		}
	}
	if keys := config.NeedsRestart(l.cfg, next); len(keys) > 0 {
		l.log.Warn("reload: changes that take effect at the next start are ignored", "sections", keys)
	}
	l.cfg = mergeRunning(l.cfg, next)
	l.log.Info("config reloaded", "sites", len(next.Sites), "devices", len(devs), "sessions_closed", closed, "hardware_rebuilt", hw)
	daemon.LogClosedServices(l.log, l.eng)
	return nil
}

// mergeRunning is next with the sections a reload cannot change kept
// from running, so the next reload compares against what runs.
func mergeRunning(running, next *config.Config) *config.Config {
	c := *next
	c.Store, c.Listen, c.Log = running.Store, running.Listen, running.Log
	return &c
}

// onHangup reloads the configuration, read by load, at every SIGHUP until
// ctx ends or stop is called. A file that does not load or that a part
// refuses is logged with its errors and changes nothing.
func (l *live) onHangup(ctx context.Context, load func() (*config.Config, error)) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-hup:
			}
			l.log.Info("SIGHUP: reloading the configuration")
			next, err := load()
			if err == nil {
				err = l.reload(ctx, next)
			}
			if err != nil {
				l.log.Error("reload refused: the running configuration stays", "err", err)
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// writePIDFile writes this process's id to file, when set.
func writePIDFile(file string) error {
	if file == "" {
		return nil
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// removePIDFile removes the pid file, when set, at exit.
func removePIDFile(file string) {
	if file != "" {
		_ = os.Remove(file)
	}
}
