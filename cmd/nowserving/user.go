package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/staff"
)

// newUserCmd is `nowserving user add|passwd|disable|enable|list`: the
// staff accounts of the browser pages, in the database.
func newUserCmd() *cobra.Command {
	return with(&cobra.Command{Use: "user", Short: "Manage the staff accounts of the browser pages (counter, supervisor, admin)"},
		newUserAddCmd(), newUserPasswdCmd(), newUserDisableCmd(true), newUserDisableCmd(false), newUserListCmd())
}

// readPassword reads the password from the first line of stdin, prompting
// on stderr: it is never an argument (argv is visible to every user of the
// machine) and never printed.
func readPassword(cmd *cobra.Command) (string, error) {
	fmt.Fprint(cmd.ErrOrStderr(), "Password (one line on standard input): ")
	line, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), staff.MaxPassword+2)).ReadString('\n')
	fmt.Fprintln(cmd.ErrOrStderr())
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func newUserAddCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create an account; the password is read from standard input",
		Long: `add creates a staff account. NAME is 1 to 64 of a-z 0-9 . _ - ; the password
(8 to 256 bytes) is read from the first line of standard input and only its
argon2id hash is stored. A counter account needs --counter: the counters it
may act at (at --site's sites); a supervisor acts at every counter of its
sites (all sites without --site); an admin also manages accounts. With
--config, the sites and counters must be the configuration's (as the admin
page checks them); with --db alone they cannot be checked.`,
		Args: cobra.ExactArgs(1),
	}
	target := addDBFlags(cmd)
	role := cmd.Flags().String("role", "counter", "counter, supervisor or admin")
	siteIDs := cmd.Flags().StringSlice("site", nil, "site the account may act on (repeat; none: every site)")
	counters := cmd.Flags().StringSlice("counter", nil, "counter id a counter account may act at (repeat)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a := queue.Account{Name: args[0], Role: queue.Role(*role), Sites: *siteIDs, Counters: *counters}
		if err := staff.CheckAccount(a); err != nil {
			return err
		}
		st, cfg, err := target.resolve(cmd)
		if err != nil {
			return err
		}
		if cfg != nil {
			if err := staff.CheckPlaces(sites(cfg), a.Sites, a.Counters); err != nil {
				return fmt.Errorf("user add %s: %w", a.Name, err)
			}
		}
		pw, err := readPassword(cmd)
		if err != nil {
			return err
		}
		return onResolved(cmd, "user add", true, st, cfg, func(s *sqlstore.Store, _ config.Store, _ *config.Config) error {
			if err := staff.Add(cmd.Context(), s, a, pw, staff.DefaultParams, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account %s (%s) created\n", a.Name, a.Role)
			return nil
		})
	}
	return cmd
}

func newUserPasswdCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set an account's password, read from standard input",
		Args:  cobra.ExactArgs(1),
	}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		pw, err := readPassword(cmd)
		if err != nil {
			return err
		}
		return target.on(cmd, "user passwd", true, func(s *sqlstore.Store, _ config.Store, _ *config.Config) error {
			if err := staff.SetPassword(cmd.Context(), s, args[0], pw, staff.DefaultParams, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password of %s set\n", args[0])
			return nil
		})
	}
	return cmd
}

func newUserDisableCmd(disable bool) *cobra.Command {
	use, short, done := "disable NAME", "Disable an account: no login, and its open sessions end at their next action", "disabled"
	if !disable {
		use, short, done = "enable NAME", "Enable a disabled account again", "enabled"
	}
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1)}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return target.on(cmd, "user "+strings.Fields(use)[0], true, func(s *sqlstore.Store, _ config.Store, _ *config.Config) error {
			if err := staff.SetDisabled(cmd.Context(), s, args[0], disable, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account %s %s\n", args[0], done)
			return nil
		})
	}
	return cmd
}

func newUserListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List the accounts (never their passwords or hashes)", Args: cobra.NoArgs}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return target.on(cmd, "user list", true, func(s *sqlstore.Store, _ config.Store, _ *config.Config) error {
			all, err := s.Accounts(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tSITES\tCOUNTERS\tSTATE")
			for _, a := range all {
				state := "active"
				if a.Disabled {
					state = "disabled"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Role, listOr(a.Sites, "all"), listOr(a.Counters, "-"), state)
			}
			return tw.Flush()
		})
	}
	return cmd
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ",")
}
