package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// notifyReceivers are the webhooks and commands of the notify section,
// each taking its own events or notify.events.
func notifyReceivers(n config.Notify) []notify.Receiver {
	events := func(own []string) []string {
		if len(own) > 0 {
			return own
		}
		return n.Events
	}
	var rs []notify.Receiver
	for _, h := range n.Webhooks {
		rs = append(rs, notify.Receiver{Name: h.Name, Events: events(h.Events), Deliverer: &notify.Webhook{URL: h.URL, Secret: []byte(h.Secret)}})
	}
	for _, c := range n.Commands {
		rs = append(rs, notify.Receiver{Name: c.Name, Events: events(c.Events), Deliverer: &notify.Command{Run: c.Run}})
	}
	for _, e := range n.Emails {
		rs = append(rs, notify.Receiver{Name: e.Name, Events: e.Events, NoEvents: len(e.Events) == 0, Deliverer: &notify.Email{
			Addr: e.SMTP, From: e.From, To: e.To, Username: e.Username, Password: e.Password, StartTLS: e.StartTLS}})
	}
	return rs
}

// newReports is the daemon's part that sends the scheduled reports of
// cfg through the outbox.
func newReports(cfg *config.Config, eng *queue.Engine, ps *daemon.PendingStore, log *slog.Logger) *daemon.Reports {
	var ss []daemon.ReportSchedule
	for _, s := range cfg.Reports.Schedules {
		at, _ := time.Parse("15:04", s.At) // validated
		ss = append(ss, daemon.ReportSchedule{Name: s.Name, Site: s.Site, Weekly: s.Every == "week",
			At: time.Duration(at.Hour())*time.Hour + time.Duration(at.Minute())*time.Minute, Format: s.Format, To: s.To})
	}
	return daemon.NewReports(daemon.ReportsOpts{Engine: eng, Store: ps, Schedules: ss, Timeout: time.Minute, Logger: log})
}

// newNotifier builds the delivery worker of the notify section over the
// daemon's store and registers its metrics.
func newNotifier(n config.Notify, st notify.Store, reg prometheus.Registerer, log *slog.Logger) (*notify.Worker, error) {
	w, err := notify.New(notify.Opts{
		Store: st, Receivers: notifyReceivers(n), Attempts: n.Attempts, MinBackoff: n.Backoff.Min, MaxBackoff: n.Backoff.Max,
		Batch: n.Batch, Poll: n.Poll, Timeout: n.Timeout, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	if err := metrics.RegisterOutbox(reg, daemon.OutboxSource(w, time.Now)); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	return w, nil
}

func newNotifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "See and requeue the notifications of the outbox (webhooks, commands)",
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Print the pending and dead notifications, the last dead ones with their error",
		Args:  cobra.NoArgs,
	}
	statusDB := addDBFlags(status)
	dead := status.Flags().Int("dead", 10, "how many of the last dead notifications to list")
	status.RunE = func(cmd *cobra.Command, _ []string) error {
		return onOutbox(cmd, statusDB, func(s *sqlstore.Store) error {
			st, err := s.OutboxStatus(cmd.Context(), *dead)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), st)
			}
			return err
		})
	}
	requeue := &cobra.Command{
		Use:   "requeue",
		Short: "Send the dead notifications again, counting their attempts from zero",
		Args:  cobra.NoArgs,
	}
	requeueDB := addDBFlags(requeue)
	receiver := requeue.Flags().String("receiver", "", "only the dead notifications of this receiver (default: every receiver's)")
	requeue.RunE = func(cmd *cobra.Command, _ []string) error {
		return onOutbox(cmd, requeueDB, func(s *sqlstore.Store) error {
			n, err := s.RequeueOutbox(cmd.Context(), *receiver, time.Now())
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "%d dead notifications due again\n", n)
			}
			return err
		})
	}
	return with(cmd, status, requeue)
}

// onOutbox runs f on the store target names, which must have the outbox.
func onOutbox(cmd *cobra.Command, target dbTarget, f func(s *sqlstore.Store) error) error {
	return target.on(cmd, "notify:", false, func(s *sqlstore.Store, st config.Store, _ *config.Config) error {
		if v, err := s.Version(cmd.Context()); err != nil || v < sqlstore.OutboxMigration {
			return fmt.Errorf("notify: %s database has no outbox (schema version %d, %v): `nowserving migrate` adds it", st.Driver, v, err)
		}
		return f(s)
	})
}
