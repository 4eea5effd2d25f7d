package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

func newReloadCmd() *cobra.Command {
	var file, pidFile string
	var pid int
	cmd := &cobra.Command{
		Use:   "reload",
		Short: "Check a configuration file, then have the running daemon re-read it (SIGHUP)",
		Long: `reload loads and validates the configuration file as serve does (the same
key-named errors, exit 1 and the daemon untouched when it is invalid), then
sends SIGHUP to the daemon, named by --pid or by the --pid-file serve wrote.
The daemon re-reads its own --config file and logs msg="config reloaded", or
msg="reload refused" with the reason and keeps its running configuration.
Under systemd, systemctl reload nowserving does the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("reload: give --config FILE, the file the daemon runs with")
			}
			if _, err := config.Load(config.Opts{File: file}); err != nil {
				return err
			}
			n, err := daemonPID(pid, pidFile)
			if err != nil {
				return err
			}
			if err := syscall.Kill(n, syscall.SIGHUP); err != nil {
				return fmt.Errorf("reload: signal pid %d: %w", n, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is valid; sent SIGHUP to pid %d (its log says msg=\"config reloaded\" or why it refused)\n", file, n)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "the configuration file the daemon runs with")
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "the file serve --pid-file wrote")
	cmd.Flags().IntVar(&pid, "pid", 0, "the daemon's process id")
	return cmd
}

// daemonPID is the daemon's process id from --pid or --pid-file.
func daemonPID(pid int, file string) (int, error) {
	switch {
	case pid > 0:
		return pid, nil
	case file == "":
		return 0, fmt.Errorf("reload: say which daemon: --pid N or --pid-file FILE (serve --pid-file FILE writes it)")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("reload: %w (is the daemon running with --pid-file %s?)", err, file)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("reload: %s holds %q, not a process id", file, strings.TrimSpace(string(b)))
	}
	return n, nil
}

func newBackupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "Copy the SQLite database consistently while the daemon runs",
		Long: `backup writes a consistent copy of the embedded SQLite database to a new file
while the daemon keeps serving (VACUUM INTO reads one snapshot; writers are
not stopped), then checks the copy's integrity. Restore by stopping the
daemon and putting the copy in place of the database file (remove its -wal
and -shm files). PostgreSQL and MariaDB have their own online tools:
pg_dump and mariadb-dump --single-transaction (see the README, "Running it
in production").`,
		Args: cobra.NoArgs,
	}
	target := addDBFlags(cmd)
	to := cmd.Flags().String("to", "", "the new file to write the copy to (must not exist)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *to == "" {
			return fmt.Errorf("backup: give --to FILE, the new file to write the copy to")
		}
		st, _, err := target.resolve(cmd)
		if err != nil {
			return err
		}
		switch st.Driver {
		case config.DriverSQLite:
		case config.DriverPostgres:
			return fmt.Errorf("backup: a PostgreSQL database is copied online by pg_dump: pg_dump -Fc -f %s 'DSN'", *to)
		default:
			return fmt.Errorf("backup: a MariaDB/MySQL database is copied online by mariadb-dump --single-transaction DB > %s", *to)
		}
		if err := sqlite.Backup(cmd.Context(), st.DSN, *to); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s copied to %s (integrity check ok)\n", st.DSN, *to)
		return nil
	}
	return cmd
}

// storeOnly is the store of the --store-* flags and NOWSERVING_STORE_*
// variables, for a command given no --config and no --db.
func storeOnly(cmd *cobra.Command) (config.Store, *config.Config, error) {
	given := false
	cmd.Flags().Visit(func(f *pflag.Flag) { given = given || strings.HasPrefix(f.Name, "store-") })
	for _, k := range []string{"store.driver", "store.dsn"} {
		_, set := os.LookupEnv(config.EnvName(k))
		given = given || set
	}
	if !given {
		return config.Store{}, nil, fmt.Errorf("say which database: --db DSN, --store-driver D --store-dsn DSN (or NOWSERVING_STORE_DRIVER and NOWSERVING_STORE_DSN), or --config FILE")
	}
	cfg, err := config.Load(config.Opts{Flags: cmd.Flags(), Only: []string{"store"}})
	if err != nil {
		return config.Store{}, nil, err
	}
	warnEnv(cfg)
	return cfg.Store, nil, nil
}
