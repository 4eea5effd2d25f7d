package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/report"
)

// historyFlags are bench history's options.
type historyFlags struct {
	file, db, empty, site string
	days, perDay          int
	emptyDays             int
	purge, measureOnly    bool
	seed                  uint64
}

func newBenchHistoryCmd() *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Fill a database with days of consistent history, then measure check, report, backup and size against an empty one",
		Long: `history writes --days finished service days of --per-day tickets each, and
today so far, for a site of --config (the demo hospital: testdata/hospital.yaml)
straight into the new database --db (the store's own batched writes, a day a
transaction; check finds it clean), sums them into the daily figures as a
daemon does, and with --purge removes what the configuration's retention
windows say, as a daemon's purge does: after each day written, as of noon
the next day (so the database holds what a daemon with that retention
holds, its freed space reused as it would be: on PostgreSQL it runs VACUUM
every seven days, as autovacuum would), and once more as of now. It writes today alone (and --empty-days days before it) into --empty-db
(default for SQLite: the --db file with .empty before its extension). Then it
runs this binary's check (its default window, and --all), report (today, a
past day, 30 days) and, on SQLite, backup on both, and prints their time and
peak memory side by side with the databases' sizes.

  nowserving bench history --config testdata/hospital.yaml --db /tmp/year.db --days 365 --per-day 10000`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.file, "config", "", "YAML configuration with the site (e.g. testdata/hospital.yaml)")
	fl.StringVar(&f.db, "db", "", "the new database to fill: a SQLite file, postgres://... or user@tcp(host:port)/db")
	fl.StringVar(&f.empty, "empty-db", "", "the new database for today alone (default for SQLite: next to --db)")
	fl.StringVar(&f.site, "site", "", "site id (default: the first)")
	fl.IntVar(&f.days, "days", 30, "finished service days before today")
	fl.IntVar(&f.emptyDays, "empty-days", 0, "finished service days before today in --empty-db (2: the days check's default window reads, so its rows are the same)")
	fl.IntVar(&f.perDay, "per-day", 10000, "tickets a day")
	fl.BoolVar(&f.purge, "purge", false, "purge past the configuration's retention windows as a daemon does: after each day written, as of noon the next day, then as of now")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed of the history")
	fl.BoolVar(&f.measureOnly, "measure-only", false, "measure databases filled before (by the same flags): sum what is left to sum, write no history")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return f.run(cmd) }
	return cmd
}

// run fills the databases, measures them and prints the table.
func (f *historyFlags) run(cmd *cobra.Command) error {
	if f.file == "" || f.db == "" {
		return fmt.Errorf("bench history: give --config FILE and --db DSN")
	}
	cfg, err := config.Load(config.Opts{File: f.file})
	if err != nil {
		return err
	}
	site := sites(cfg)[0]
	for _, s := range sites(cfg) {
		if s.ID == f.site {
			site = s
		}
	}
	ctx, w := cmd.Context(), cmd.OutOrStdout()
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	now := time.Now()
	full, _, err := guessDriver(f.db)
	if err != nil {
		return fmt.Errorf("bench history: --db: %w", err)
	}
	if f.empty != "" {
		if _, _, err := guessDriver(f.empty); err != nil {
			return fmt.Errorf("bench history: --empty-db: %w", err)
		}
	}
	if f.empty == "" && full == config.DriverSQLite {
		ext := filepath.Ext(f.db)
		f.empty = strings.TrimSuffix(f.db, ext) + ".empty" + ext
	}
	var cols []historyColumn
	if f.empty != "" {
		c, err := f.fill(ctx, w, cfg, site, f.empty, f.emptyDays, now, log)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	c, err := f.fill(ctx, w, cfg, site, f.db, f.days, now, log)
	if err != nil {
		return err
	}
	cols = append(cols, c)
	for i := range cols {
		if err := f.measure(ctx, &cols[i], site, now); err != nil {
			return err
		}
	}
	return printHistory(w, cols)
}

// historyColumn is one database measured.
type historyColumn struct {
	name    string
	store   config.Store
	days    int
	size    int64
	results []historyResult
}

// historyResult is one operation's time, CPU time (user and system: on
// a busy machine the wall time is mostly the wait for a core) and peak
// memory.
type historyResult struct {
	op     string
	d, cpu time.Duration
	rss    int64 // KiB
	err    error
}

// fill writes days of history and today into the new database dsn, sums
// the days, purges with --purge, and reports its size.
func (f *historyFlags) fill(ctx context.Context, w io.Writer, cfg *config.Config, site queue.Site, dsn string, days int,
	now time.Time, log *slog.Logger) (historyColumn, error) {
	drv, rest, err := guessDriver(dsn)
	if err != nil {
		return historyColumn{}, fmt.Errorf("bench history: %w", err)
	}
	col := historyColumn{name: fmt.Sprintf("%d days", days), store: config.Store{Driver: drv, DSN: rest}, days: days}
	if days == 0 {
		col.name = "empty (today)"
	}
	st, err := openStore(ctx, col.store, log, true)
	if err != nil {
		return col, fmt.Errorf("bench history: %w", err)
	}
	defer st.Close()
	// Summing a year reads pages of events on a loaded machine: a store
	// time-out of its own, well above a device's.
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{site}, Committers: 1, Logger: log, StoreTimeout: time.Minute})
	if err != nil {
		return col, fmt.Errorf("bench history: %w", err)
	}
	defer eng.Close(context.WithoutCancel(ctx))
	var hp *historyPurge
	if f.purge {
		hp = newHistoryPurge(w, cfg, st, eng, site.ID, col.name, col.store.Driver)
	}
	if !f.measureOnly {
		if err := f.write(ctx, w, st, eng, site, &col, now, hp); err != nil {
			return col, err
		}
	}
	start := time.Now()
	if err := sumAll(ctx, eng, st, site.ID, now); err != nil {
		return col, err
	}
	fmt.Fprintf(w, "%s: daily figures summed in %s\n", col.name, time.Since(start).Round(time.Millisecond))
	if hp != nil {
		asWritten := maps.Clone(hp.total)
		if err := hp.at(ctx, now, true); err != nil {
			return col, err
		}
		fmt.Fprintf(w, "%s: purged %s in %s (as the days were written: %s)\n", col.name, purgedLine(hp.total),
			hp.took.Round(time.Millisecond), purgedLine(asWritten))
		col.name += " (purged)"
	}
	col.size, err = st.Size(ctx)
	return col, err
}

// write writes col's days of history and today into the new database.
func (f *historyFlags) write(ctx context.Context, w io.Writer, st *sqlstore.Store, eng *queue.Engine, site queue.Site,
	col *historyColumn, now time.Time, hp *historyPurge) error {
	if v, err := eng.LastVersion(ctx, site.ID); err != nil || v != 0 {
		return fmt.Errorf("bench history: %s must be a new database (site %s has %d events; %v)", col.store.DSN, site.ID, v, err)
	}
	start := time.Now()
	res, err := load.History(ctx, st, site, load.HistoryOpts{Days: col.days, PerDay: f.perDay, Today: true, Now: now, Seed: f.seed,
		Progress: func(day string, n int) error {
			if strings.HasSuffix(day, "-01") {
				fmt.Fprintf(w, "  %s: %s written (%s)\n", col.name, day, time.Since(start).Round(time.Second))
			}
			if hp == nil || day >= site.Day(now) {
				return nil
			}
			// A daemon purges as the days pass: as of noon the next day.
			d, err := time.ParseInLocation(time.DateOnly, day, site.Location)
			if err != nil {
				return err
			}
			if err := hp.at(ctx, d.AddDate(0, 0, 1).Add(12*time.Hour), false); err != nil {
				return err
			}
			return hp.vacuumWeekly(ctx)
		}})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d days, %d tickets, %d events written in %s\n", col.name, res.Days, res.Tickets, res.Events, time.Since(start).Round(time.Millisecond))
	if err := analyze(ctx, st, col.store.Driver); err != nil {
		return err
	}
	return nil
}

// analyze has a server database gather the statistics of the tables
// just filled, as its autovacuum (or InnoDB) would before long: without
// them the first reads are planned for empty tables.
func analyze(ctx context.Context, st *sqlstore.Store, drv config.Driver) error {
	var q []string
	switch drv {
	case config.DriverPostgres:
		q = []string{"ANALYZE"}
	case config.DriverMySQL:
		q = []string{"ANALYZE TABLE tickets, events, day_counters, site_versions"}
	}
	for _, s := range q {
		if _, err := st.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("bench history: %s: %w", s, err)
		}
	}
	return nil
}

// purgedLine says what a purge removed, by table in name order
// ("events 3670000, tickets 0"), or "nothing".
func purgedLine(n map[string]int) string {
	if len(n) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(n))
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// sumAll sums every day of site finished by now into the daily figures,
// a chunk of days a read, as a daemon's passes do one after the other.
func sumAll(ctx context.Context, eng *queue.Engine, st *sqlstore.Store, site string, now time.Time) error {
	for more := true; more; {
		var err error
		if _, more, err = report.SumDays(ctx, eng, st, site, now, sumChunk, nil); err != nil {
			return fmt.Errorf("bench history: sum the days before %s: %w", now.Format(time.DateOnly), err)
		}
	}
	return nil
}

// historyPurge purges a history's database as a daemon with the
// configuration's retention would, as of the times it is given.
type historyPurge struct {
	w          io.Writer
	p          *daemon.Purger
	st         *sqlstore.Store
	eng        *queue.Engine
	site, name string
	drv        config.Driver
	now        time.Time // what the purger takes for now
	days       int       // days purged as they were written
	total      map[string]int
	took       time.Duration
}

func newHistoryPurge(w io.Writer, cfg *config.Config, st *sqlstore.Store, eng *queue.Engine, site, name string, drv config.Driver) *historyPurge {
	h := &historyPurge{w: w, st: st, eng: eng, site: site, name: name, drv: drv, total: map[string]int{}}
	rt := cfg.Retention
	h.p = daemon.NewPurger(daemon.PurgerOpts{Store: st, Holder: "bench", Sites: eng.Sites, Requests: rt.Requests, Events: rt.Events,
		Tickets: rt.Tickets, Bookings: rt.Bookings, Outbox: rt.Outbox, Personal: rt.Personal, Batch: 10000, Every: time.Minute,
		Now: func() time.Time { return h.now }})
	return h
}

// vacuumWeekly does, every seventh day written, what a PostgreSQL
// server's autovacuum does as a daemon purges: it marks the space of the
// deleted rows free for new ones, so that the database holds what a
// server that ran the days holds, whether or not autovacuum is on where
// the bench runs. SQLite gives pages back in each pass (Reclaim); InnoDB's
// purge thread frees rows by itself.
func (h *historyPurge) vacuumWeekly(ctx context.Context) error {
	if h.days++; h.drv != config.DriverPostgres || h.days%7 != 0 {
		return nil
	}
	start := time.Now()
	defer func() { h.took += time.Since(start) }()
	if _, err := h.st.DB().ExecContext(ctx, "VACUUM (ANALYZE) events, tickets, day_counters"); err != nil {
		return fmt.Errorf("bench history: vacuum: %w", err)
	}
	return nil
}

// at sums the days finished by now into the daily figures and purges
// what is past its window at now, pass after pass until a pass removes
// nothing, saying how far it is every 30 s when progress is set.
func (h *historyPurge) at(ctx context.Context, now time.Time, progress bool) error {
	start := time.Now()
	defer func() { h.took += time.Since(start) }()
	if err := sumAll(ctx, h.eng, h.st, h.site, now); err != nil {
		return err
	}
	h.now = now
	for said := time.Now(); ; {
		n, _, err := h.p.Pass(ctx)
		for k, v := range n {
			h.total[k] += v
		}
		if err != nil {
			return fmt.Errorf("bench history: purge as of %s (purged %s before): %w", now.Format(time.DateOnly), purgedLine(h.total), err)
		}
		if progress && time.Since(said) >= 30*time.Second {
			fmt.Fprintf(h.w, "  %s: purging, %s so far (%s)\n", h.name, purgedLine(h.total), time.Since(start).Round(time.Second))
			said = time.Now()
		}
		if n["events"]+n["tickets"]+n["requests"] == 0 {
			return nil
		}
	}
}

// measure runs the operations on col's database, each as this binary's
// own command.
func (f *historyFlags) measure(ctx context.Context, col *historyColumn, site queue.Site, now time.Time) error {
	today := site.Day(now)
	t, _ := time.Parse(time.DateOnly, today)
	past := t.AddDate(0, 0, -2).Format(time.DateOnly)
	month := t.AddDate(0, 0, -30).Format(time.DateOnly)
	db := []string{"--store-driver", string(col.store.Driver), "--store-dsn", col.store.DSN}
	ops := []struct {
		name string
		args []string
	}{
		{"check (default window)", append([]string{"check", "--config", f.file}, db...)},
		{"check --all", append([]string{"check", "--all", "--config", f.file}, db...)},
		{"report today", append([]string{"report", "--config", f.file, "--site", site.ID, "--day", today}, db...)},
		{"report one past day", append([]string{"report", "--config", f.file, "--site", site.ID, "--day", past}, db...)},
		{"report 30 days", append([]string{"report", "--config", f.file, "--site", site.ID, "--day", month, "--to", past}, db...)},
	}
	if col.store.Driver == config.DriverSQLite {
		to := col.store.DSN + ".backup"
		os.Remove(to)
		defer os.Remove(to)
		ops = append(ops, struct {
			name string
			args []string
		}{"backup", []string{"backup", "--db", col.store.DSN, "--to", to}})
	}
	for _, op := range ops {
		col.results = append(col.results, runMeasured(ctx, op.name, op.args))
	}
	return nil
}

// runMeasured runs this binary with args and returns its wall time and
// peak RSS (VmHWM of /proc/PID/status, read as it runs: the rusage of a
// child counts the parent's memory from before its exec).
func runMeasured(ctx context.Context, name string, args []string) historyResult {
	exe, err := os.Executable()
	if err != nil {
		return historyResult{op: name, err: err}
	}
	c := exec.CommandContext(ctx, exe, args...)
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	if err := c.Start(); err != nil {
		return historyResult{op: name, err: err}
	}
	done := make(chan struct{})
	peak := make(chan int64)
	go func() {
		var kib int64
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			kib = max(kib, vmHWM(c.Process.Pid))
			select {
			case <-done:
				peak <- kib
				return
			case <-tk.C:
			}
		}
	}()
	err = c.Wait()
	r := historyResult{op: name, d: time.Since(start)}
	if ps := c.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	close(done)
	r.rss = <-peak
	if err != nil {
		r.err = fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return r
}

// vmHWM is the peak resident memory of process pid in KiB, 0 when it
// cannot be read (the process ended).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// printHistory prints the columns side by side, with the ratio of the
// last to the first.
func printHistory(w io.Writer, cols []historyColumn) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "| operation |")
	for _, c := range cols {
		fmt.Fprintf(tw, " %s |", c.name)
	}
	fmt.Fprintln(tw, " ratio |")
	first, last := cols[0], cols[len(cols)-1]
	for i, r := range first.results {
		fmt.Fprintf(tw, "| %s |", r.op)
		for _, c := range cols {
			x := c.results[i]
			if x.err != nil {
				fmt.Fprint(tw, " failed |")
				continue
			}
			fmt.Fprintf(tw, " %.2f s (CPU %.2f s), %d MiB |", x.d.Seconds(), x.cpu.Seconds(), x.rss/1024)
		}
		l := last.results[i]
		fmt.Fprintf(tw, " %.1f (CPU %.1f) |\n", l.d.Seconds()/max(r.d.Seconds(), 1e-9), l.cpu.Seconds()/max(r.cpu.Seconds(), 1e-9))
	}
	fmt.Fprint(tw, "| database size |")
	for _, c := range cols {
		fmt.Fprintf(tw, " %.1f MB |", float64(c.size)/1e6)
	}
	fmt.Fprintf(tw, " %.1f |\n", float64(last.size)/max(float64(first.size), 1))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("bench history: %w", err)
	}
	for _, c := range cols {
		for _, r := range c.results {
			if r.err != nil {
				fmt.Fprintf(w, "%s, %s: %v\n", c.name, r.op, r.err)
			}
		}
	}
	return nil
}
