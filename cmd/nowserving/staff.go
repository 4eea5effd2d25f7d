package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/staff"
	"github.com/nowserving/nowserving/web"
)

// staffService builds the login service of the people's pages from
// http.staff over the accounts of st.
func staffService(c config.Staff, st queue.AccountStore) (*staff.Service, error) {
	return staff.New(staff.Opts{Accounts: st, Idle: c.SessionIdle, LoginLimit: c.LoginLimit})
}

// seedDemoAccounts creates the configured demo accounts that do not exist
// yet; one that exists is left as it is (its password may have been
// changed). A store not open yet is logged and skipped.
func seedDemoAccounts(ctx context.Context, c config.Staff, st queue.AccountStore, log *slog.Logger) {
	for _, d := range c.DemoAccounts {
		a := queue.Account{Name: d.Name, Role: queue.Role(d.Role), Sites: d.Sites, Counters: d.Counters}
		err := staff.Add(ctx, st, a, d.Password, staff.DefaultParams, time.Now())
		switch {
		case errors.Is(err, queue.ErrAccountExists):
		case err != nil:
			log.Warn("demo account not created", "name", d.Name, "err", err)
		default:
			log.Warn("demo account created from the configuration (DEMO ONLY: its password is in the file)", "name", d.Name, "role", d.Role)
		}
	}
}

// kioskDevices are the configured kiosks, which a browser kiosk page may
// be provisioned as.
func kioskDevices(cfg *config.Config) []web.KioskDevice {
	var out []web.KioskDevice
	for _, d := range cfg.Devices {
		if d.Role == config.RoleKiosk {
			out = append(out, web.KioskDevice{ID: d.ID, Site: d.Site, Secret: d.Secret})
		}
	}
	return out
}

// printKiosk prints a ticket a kiosk page issued on the device's network
// printer, when it has one (the devices are set before HTTP is served).
func (d *server) printKiosk(ctx context.Context, device string, t queue.Ticket, p queue.Position) (bool, error) {
	dev := d.live.dev
	if dev == nil || !dev.Current().HasPrinter(device) {
		return false, nil
	}
	return true, dev.PrintTicket(ctx, device, t, p)
}
