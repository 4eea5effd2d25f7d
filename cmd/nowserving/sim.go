package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nowserving/nowserving/sim"
)

// defaultAddr is the protocol address of `make run`.
const defaultAddr = sim.DefaultAddr

// defaultSimConfig is read for device credentials when neither --config
// nor --device is given (the demo configuration of `make run`).
const defaultSimConfig = sim.DefaultConfig

// simFlags are the flags every sim subcommand shares.
type simFlags struct {
	o       sim.Opts
	verbose bool
}

// connFlags adds the flags that say where the daemon is and which device
// to play; device and secret are their help texts.
func (f *simFlags) connFlags(fs *pflag.FlagSet, device, secret string) {
	fs.StringVar(&f.o.Addr, "addr", "", "daemon protocol address, or several separated by commas to fail over in order (default: the device's daemons in --config, else its listen.protocol, else "+defaultAddr+")")
	fs.StringVar(&f.o.Config, "config", "", "YAML configuration to read devices from (default "+defaultSimConfig+" if present)")
	fs.StringVar(&f.o.Device, "device", "", device)
	fs.StringVar(&f.o.Secret, "secret", "", secret)
	fs.StringVar(&f.o.Site, "site", "", "site code (default: the device's site)")
}

// tlsFlags adds the TLS flags to fs.
func (f *simFlags) tlsFlags(fs *pflag.FlagSet) {
	tlsClientFlags(fs, &f.o.TLS, &f.o.TLSCA, &f.o.TLSInsecure)
}

// tlsClientFlags adds --tls, --tls-ca and --tls-insecure, how a device
// played by sim, bench or conform daemon connects (sim.TLSConfig), to fs.
func tlsClientFlags(fs *pflag.FlagSet, on *bool, ca *string, insecure *bool) {
	fs.BoolVar(on, "tls", false, "connect with TLS, trusting the system's CAs")
	fs.StringVar(ca, "tls-ca", "", "connect with TLS, trusting the CA certificate(s) in this PEM file")
	fs.BoolVar(insecure, "tls-insecure", false, "connect with TLS without checking the daemon's certificate (tests only)")
}

// env resolves the flags; --verbose logs connection events on stderr.
func (f *simFlags) env(cmd *cobra.Command) (*sim.Env, error) {
	o := f.o
	if f.verbose {
		o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return sim.New(o)
}

// runE is a RunE that runs run on the Env of the flags.
func (f *simFlags) runE(run func(cmd *cobra.Command, e *sim.Env, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		e, err := f.env(cmd)
		if err != nil {
			return err
		}
		return run(cmd, e, args)
	}
}

// runOpts is the RunE of a sim subcommand that takes no arguments and
// hands its options, as its flags left them, to one method of the Env.
func runOpts[O any](f *simFlags, o *O, run func(e *sim.Env, ctx context.Context, o O, out io.Writer) error) func(*cobra.Command, []string) error {
	return f.runE(func(cmd *cobra.Command, e *sim.Env, _ []string) error {
		return run(e, cmd.Context(), *o, cmd.OutOrStdout())
	})
}

func newSimCmd(f *simFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Play a kiosk, a counter keypad or a display against a running daemon",
		Long: `sim plays the devices of a site over the device protocol, against a daemon
started with "nowserving serve". Device ids and secrets come from --config
(by default ` + defaultSimConfig + ` when it exists): the first device of the
needed role (and counter) is used unless --device names one. --device with
--secret works without any configuration file.`,
	}
	pf := cmd.PersistentFlags()
	f.connFlags(pf, "device id (default: the first suitable device of --config)", "device secret (default: from --config)")
	pf.DurationVar(&f.o.Timeout, "timeout", 3*time.Second, "time-out of each attempt of a request")
	pf.IntVar(&f.o.Retries, "retries", 3, "retries of a request after a time-out or a dropped connection")
	pf.BoolVarP(&f.verbose, "verbose", "v", false, "log connection events on stderr")
	f.tlsFlags(pf)
	return cmd
}

func newSimKioskCmd(f *simFlags) *cobra.Command {
	var k sim.KioskOpts
	cmd := &cobra.Command{
		Use:   "kiosk --service CODE | --check-in BOOKING-CODE",
		Short: "Take a ticket (or check a booking in) as a kiosk and print it",
		Args:  cobra.NoArgs,
		RunE:  runOpts(f, &k, (*sim.Env).Kiosk),
	}
	fl := cmd.Flags()
	fl.StringVar(&k.Service, "service", "", "service code, e.g. A")
	fl.StringVar(&k.CheckIn, "check-in", "", "booking code: check the booking in instead of taking a ticket")
	fl.StringVar(&k.Class, "class", "normal", "ticket class, by the name the site configures (the daemon lists them in WELCOME), e.g. normal, vip, priority")
	fl.StringVar(&k.Lang, "lang", "", "language of the printout (default: the site's first)")
	fl.StringVar(&k.IdemKey, "idem-key", "", "idempotency key: the same key twice gives the same ticket")
	fl.BoolVar(&k.Print, "print", false, "ask for the ESC/POS printout and list its commands")
	return cmd
}

func newSimStatusCmd(f *simFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status [NUMBER]",
		Short: "Print the state of the site, or of one ticket",
		Args:  cobra.MaximumNArgs(1),
		RunE: f.runE(func(cmd *cobra.Command, e *sim.Env, args []string) error {
			number := ""
			if len(args) == 1 {
				number = args[0]
			}
			return e.Status(cmd.Context(), number, cmd.OutOrStdout())
		}),
	}
}
