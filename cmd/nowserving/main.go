// Command nowserving is the daemon of a "take a number, wait to be called"
// system and its tools: serve runs the daemon, sim plays kiosks, keypads and
// displays, console is the supervisor's terminal UI, migrate prepares a
// database, check verifies the invariants on a live database, reload has a
// running daemon re-read its configuration, backup copies the SQLite
// database online, report prints statistics, notify shows and requeues the
// outbox's notifications, bench measures a store, conform checks a device or
// a daemon against the device protocol.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/protocol/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		var ex exitError
		if errors.As(err, &ex) {
			os.Exit(int(ex)) // the command has said why
		}
		fmt.Fprintln(os.Stderr, "nowserving:", err)
		os.Exit(1)
	}
}

// exitError is an exit status a subcommand chose (check exits 1 on a
// violation, 2 on a usage error).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// newRoot builds the command tree: every subcommand is listed here.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "nowserving",
		Short:         "Take a number, wait to be called: the queue daemon and its tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	sf := &simFlags{}
	root.AddCommand(
		newServeCmd(),
		newConsoleCmd(),
		with(newSimCmd(sf), newSimKioskCmd(sf), newSimKeypadCmd(sf), newSimDisplayCmd(sf), newSimStatusCmd(sf), newSimLoadCmd(sf), newSimBookCmd(sf)),
		newMigrateCmd(),
		newCheckCmd(),
		newReloadCmd(),
		newBackupCmd(),
		newReportCmd(),
		newNotifyCmd(),
		newUserCmd(),
		with(&cobra.Command{Use: "bench", Short: "Measure a running daemon (connections held, ticket throughput and latency), a filled database, or raw SQLite beside them"},
			newBenchConnsCmd(), newBenchIssueCmd(), newBenchCallCmd(), newBenchBookCmd(), newBenchDayCmd(), newBenchHistoryCmd(), newBenchRawCmd()),
		with(&cobra.Command{Use: "conform", Short: "Check a device, or a daemon, against the device protocol (PROTOCOL.md)", Long: conformLong},
			newConformDeviceCmd(wire.RoleKiosk), newConformDeviceCmd(wire.RoleKeypad), newConformDeviceCmd(wire.RoleDisplay), newConformDaemonCmd(), newConformAPICmd()),
	)
	return root
}

// with adds subs to cmd and returns it: a command group (bench, conform)
// is a bare cobra.Command, its name and help.
func with(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return cmd
}

// configFlags adds --config and the overridable keys of sections (none:
// all) to cmd.
func configFlags(cmd *cobra.Command, sections ...string) *string {
	file := cmd.Flags().String("config", "", "YAML configuration file (e.g. testdata/hospital.yaml)")
	config.BindFlagsUnder(cmd.Flags(), sections...)
	return file
}

// loadConfig loads and validates the configuration for cmd.
func loadConfig(cmd *cobra.Command, file string) (*config.Config, error) {
	cfg, err := config.Load(config.Opts{File: file, Flags: cmd.Flags()})
	if err != nil {
		return nil, err
	}
	warnEnv(cfg)
	return cfg, nil
}

// warnEnv logs a warning for each NOWSERVING_* variable that sets no key
// (config.EnvWarnings), on the logger of cfg's log section.
func warnEnv(cfg *config.Config) {
	log := newLogger(cfg.Log)
	for _, w := range config.EnvWarnings(os.Environ(), cfg) {
		log.Warn(w)
	}
}

// newLogger builds the process logger from the log section, on stderr.
func newLogger(l config.Log) *slog.Logger {
	o := &slog.HandlerOptions{Level: l.SlogLevel()}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, o))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, o))
}
