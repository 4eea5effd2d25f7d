package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/report"
	"github.com/nowserving/nowserving/web"
)

// reportLong is report's help.
const reportLong = `report computes, per service and per counter: tickets issued, called, served,
no-shows and cancelled, average and 90th-percentile wait (issue to first
call), average service time (start to done) and the busiest local hour, for
the service day --day or the days --day..--to. Finished days come from the
daily figures a daemon sums as each day closes (they outlive the purge of
the detail); today and days not summed yet from the event log of those days
only. --site may be left out when the configuration has one site; --day
defaults to the site's current service day. --people reports by person
instead: what each person did at the browser counter page (the events' actors
user:NAME@counter-ID), at which counters, with calls, recalls, tickets served,
no-shows, transfers, pauses and average service time (from the daily
figures too).

  nowserving report --config hospital.yaml --site main --day 2026-03-02 --format csv`

func newReportCmd() *cobra.Command {
	var site, day, to, format string
	var people bool
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Print a site's statistics for a service day or a range of days",
		Long:  reportLong,
		Args:  cobra.NoArgs,
	}
	file := configFlags(cmd, "store")
	cmd.Flags().StringVar(&site, "site", "", "site id (default: the only site)")
	cmd.Flags().StringVar(&day, "day", "", "service day YYYY-MM-DD (default: today at the site)")
	cmd.Flags().StringVar(&to, "to", "", "last service day of a range YYYY-MM-DD (default: --day)")
	cmd.Flags().StringVar(&format, "format", "table", "output format: "+strings.Join(report.Formats, ", ")+
		", html (the report page with its charts, one file) or pdf (that page printed by a headless Chromium)")
	cmd.Flags().BoolVar(&people, "people", false, "report by person (who did what at the counter pages) instead of by service and counter")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if format != "html" && format != "pdf" && !slices.Contains(report.Formats, format) {
			return fmt.Errorf("%w: %q", report.ErrFormat, format)
		}
		cfg, err := loadConfig(cmd, *file)
		if err != nil {
			return err
		}
		if site == "" {
			if len(cfg.Sites) != 1 {
				return fmt.Errorf("report: --site is required with %d sites", len(cfg.Sites))
			}
			site = cfg.Sites[0].ID
		}
		log := newLogger(cfg.Log)
		ctx := cmd.Context()
		st, err := openStore(ctx, cfg.Store, log, false)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer st.Close()
		eng, err := queue.New(queue.Opts{Store: st, Sites: sites(cfg), Committers: 1, Logger: log})
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			eng.Close(cctx)
		}()
		if day == "" {
			s, err := eng.Site(site)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			day = s.Day(eng.Now())
		}
		if people {
			ps, err := report.People(ctx, eng, site, day, to)
			if err != nil {
				return err
			}
			return report.WritePeople(cmd.OutOrStdout(), site, day, to, ps, format)
		}
		if format == "html" || format == "pdf" {
			page := func(w io.Writer) error { return web.WriteReport(ctx, w, eng, site, day, to, "") }
			if format == "pdf" {
				return writePDF(ctx, cmd.OutOrStdout(), page)
			}
			return page(cmd.OutOrStdout())
		}
		r, err := report.Build(ctx, eng, site, day, to)
		if err != nil {
			return err
		}
		return report.Write(cmd.OutOrStdout(), r, format)
	}
	return cmd
}
