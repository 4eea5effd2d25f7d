package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// env returns a LookupEnv over a fixed map, so tests never see the real
// environment.
// env sets the NOWSERVING_* variables of kv in the process environment
// for the test (viper reads them there) and returns a lookup of kv for the
// variables that *_env keys name.
func env(t *testing.T, kv map[string]string) func(string) (string, bool) {
	for k, v := range kv {
		if strings.HasPrefix(k, EnvPrefix) {
			t.Setenv(k, v)
		}
	}
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

func noEnv(string) (string, bool) { return "", false }

func mustLoad(t *testing.T, opts Opts) *Config {
	t.Helper()
	if opts.LookupEnv == nil {
		opts.LookupEnv = noEnv
	}
	c, err := Load(opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", opts.File, err)
	}
	return c
}

func TestLoadHospital(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/hospital.yaml"})
	if c.Store.Driver != DriverSQLite || c.Store.DSN != "nowserving-demo.db" {
		t.Errorf("store = %+v, want sqlite nowserving-demo.db", c.Store)
	}
	s, ok := c.Site("hospital")
	if !ok {
		t.Fatal("no site hospital")
	}
	if got := s.Location().String(); got != "Asia/Shanghai" {
		t.Errorf("Location = %s", got)
	}
	if s.Rollover != (Clock{4, 0}) || s.Rollover.Minutes() != 240 {
		t.Errorf("Rollover = %v", s.Rollover)
	}
	var codes []string
	for _, v := range s.Services {
		codes = append(codes, v.Code)
	}
	if want := []string{"A", "R", "E"}; !slices.Equal(codes, want) {
		t.Errorf("services = %v, want %v", codes, want)
	}
	if r, _ := s.Rank("emergency"); r != 0 {
		t.Errorf("emergency rank = %d", r)
	}
	if len(s.Counters) != 5 {
		t.Errorf("counters = %d, want 5", len(s.Counters))
	}
	a, _ := s.Service("A")
	if len(a.Hours) != 0 {
		t.Errorf("A hours = %+v, want none: the demo takes tickets at any hour", a.Hours)
	}
	if a.AvgService != 6*time.Minute || a.CallTimeout != 2*time.Minute {
		t.Errorf("A durations = %s %s", a.AvgService, a.CallTimeout)
	}
	e, _ := s.Service("E")
	if e.RevisitAfter != 0 || e.ReentryAfter != 0 || e.DailyCap != 0 {
		t.Errorf("explicit zeros lost: %+v", e)
	}
	c2, _ := s.Counter("2")
	if want := []CounterService{{"A", 1}, {"R", 1}}; !slices.Equal(c2.Services, want) {
		t.Errorf("counter 2 services = %v, want %v", c2.Services, want)
	}
	roles := map[Role]int{}
	for _, d := range c.Devices {
		roles[d.Role]++
	}
	if roles[RoleKiosk] != 1 || roles[RoleKeypad] != 5 || roles[RoleDisplay] != 1 || roles[RoleConsole] != 1 {
		t.Errorf("device roles = %v", roles)
	}
	if d, _ := c.Device("keypad-5"); d.Counter != "5" {
		t.Errorf("keypad-5 counter = %q", d.Counter)
	}
}

func TestLoadBank(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/bank.yaml", LookupEnv: bankEnv})
	s := &c.Sites[0]
	var codes []string
	for _, v := range s.Services {
		codes = append(codes, v.Code)
	}
	if want := []string{"P", "B", "V"}; !slices.Equal(codes, want) {
		t.Errorf("services = %v, want %v", codes, want)
	}
	c1, _ := s.Counter("1")
	if c1.Policy != PolicyWeighted || !slices.Equal(c1.Services, []CounterService{{"V", 2}, {"P", 1}}) {
		t.Errorf("counter 1 = %+v, want weighted V:2 P:1", c1)
	}
	p, _ := s.Service("P")
	if p.Ratio == nil || !slices.Equal(p.Ratio.Priority, []string{"priority"}) || p.Ratio.NormalPerPriority != 2 {
		t.Errorf("P ratio = %+v", p.Ratio)
	}
	if c.Log.Format != "json" {
		t.Errorf("log format = %q", c.Log.Format)
	}
	if d, _ := c.Device("console-1"); d.Site != "" {
		t.Errorf("console site = %q, want every site", d.Site)
	}
}

const minimal = `
sites:
  - id: s
    timezone: Europe/Paris
    services: [ { code: A, name: { en: A } } ]
    counters: [ { id: "1", services: [A] } ]
`

func TestDefaults(t *testing.T) {
	c, err := load([]byte(minimal), Opts{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if c.Store != d.Store || c.Listen != d.Listen || c.Log != d.Log {
		t.Errorf("top = %+v %+v %+v, want defaults", c.Store, c.Listen, c.Log)
	}
	if c.Store.Batch != 64 || c.Store.Timeout != 3*time.Second || c.Store.Committers != 4 || c.Listen.Heartbeat != 10*time.Second || c.Listen.MaxConnections != 10000 ||
		c.Listen.MaxPending != 256 || c.Listen.HandshakeTimeout != 3*time.Second {
		t.Errorf("defaults changed: %+v", c)
	}
	s := c.Sites[0]
	if !slices.Equal(s.Languages, []string{"en"}) || s.Rollover != (Clock{}) {
		t.Errorf("site defaults: languages %v rollover %v", s.Languages, s.Rollover)
	}
	if len(s.Classes) != 4 || s.Classes["emergency"] != 0 || s.Classes["normal"] != 20 {
		t.Errorf("classes = %v", s.Classes)
	}
	want := Service{
		Code: "A", Name: Names{"en": "A"}, Prefix: "A", Width: 3,
		AvgService: 5 * time.Minute, RevisitAfter: 3, ReentryAfter: 1, MaxReentries: 2,
		CallTimeoutAction: TimeoutNoShow,
	}
	got := s.Services[0]
	if got.Code != want.Code || got.Prefix != want.Prefix || got.Width != want.Width ||
		got.AvgService != want.AvgService || got.RevisitAfter != want.RevisitAfter ||
		got.ReentryAfter != want.ReentryAfter || got.MaxReentries != want.MaxReentries ||
		got.CallTimeoutAction != want.CallTimeoutAction || got.DailyCap != 0 || got.Ratio != nil {
		t.Errorf("service = %+v\nwant %+v", got, want)
	}
	if ct := s.Counters[0]; ct.Policy != PolicyStrict || ct.Services[0].Weight != 1 {
		t.Errorf("counter = %+v", ct)
	}
}

func TestReentryDefaultFollowsRevisit(t *testing.T) {
	y := strings.Replace(minimal, "name: { en: A } }", "name: { en: A }, revisit_after: 6 }", 1)
	c, err := load([]byte(y), Opts{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Sites[0].Services[0]; v.RevisitAfter != 6 || v.ReentryAfter != 3 {
		t.Errorf("revisit %d reentry %d, want 6 3", v.RevisitAfter, v.ReentryAfter)
	}
}

func TestOverridePrecedence(t *testing.T) {
	const file = "../testdata/hospital.yaml"
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantDSN   string
		wantBatch int
		wantHB    time.Duration
		wantLevel string
	}{
		{"file", nil, nil, "nowserving-demo.db", 64, 10 * time.Second, "info"},
		{"env beats file",
			map[string]string{"NOWSERVING_STORE_DSN": "env.db", "NOWSERVING_STORE_BATCH": "8",
				"NOWSERVING_LISTEN_HEARTBEAT": "3s", "NOWSERVING_LOG_LEVEL": "debug"},
			nil, "env.db", 8, 3 * time.Second, "debug"},
		{"flag beats env",
			map[string]string{"NOWSERVING_STORE_DSN": "env.db", "NOWSERVING_STORE_BATCH": "8"},
			[]string{"--store-dsn=flag.db", "--listen-heartbeat=1s"},
			"flag.db", 8, time.Second, "info"},
		{"flag beats file", nil, []string{"--store-batch=16", "--log-level=warn"},
			"nowserving-demo.db", 16, 10 * time.Second, "warn"},
		{"unchanged flags keep file", nil, []string{},
			"nowserving-demo.db", 64, 10 * time.Second, "info"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := parseFlags(t, tt.args)
			c := mustLoad(t, Opts{File: file, Flags: fs, LookupEnv: env(t, tt.env)})
			if c.Store.DSN != tt.wantDSN || c.Store.Batch != tt.wantBatch ||
				c.Listen.Heartbeat != tt.wantHB || c.Log.Level != tt.wantLevel {
				t.Errorf("got dsn %q batch %d heartbeat %s level %q, want %q %d %s %q",
					c.Store.DSN, c.Store.Batch, c.Listen.Heartbeat, c.Log.Level,
					tt.wantDSN, tt.wantBatch, tt.wantHB, tt.wantLevel)
			}
		})
	}
}

// parseFlags returns a flag set with BindFlags's flags, parsed from args.
func parseFlags(t *testing.T, args []string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestEnvOverridesKeyAbsentFromFile(t *testing.T) {
	c, err := load([]byte(minimal), Opts{LookupEnv: env(t, map[string]string{
		"NOWSERVING_LISTEN_TLS_CERT": "c.pem", "NOWSERVING_LISTEN_TLS_KEY": "k.pem",
	})})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Listen.TLS.Enabled() || c.Listen.TLS.Cert != "c.pem" {
		t.Errorf("tls = %+v", c.Listen.TLS)
	}
	c, err = load([]byte(minimal), Opts{LookupEnv: env(t, map[string]string{"NOWSERVING_STORE_COMMITTERS": "2"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Store.Committers != 2 {
		t.Errorf("store.committers = %d from the environment, want 2", c.Store.Committers)
	}
}

// TestConnectionLimits: the caps on connections still authenticating come
// from the file, the environment and flags like the other listen keys.
func TestConnectionLimits(t *testing.T) {
	file := minimal + "listen: { max_pending: 64, handshake_timeout: 5s }\n"
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		pending int
		timeout time.Duration
	}{
		{"file", nil, nil, 64, 5 * time.Second},
		{"env", map[string]string{"NOWSERVING_LISTEN_MAX_PENDING": "32", "NOWSERVING_LISTEN_HANDSHAKE_TIMEOUT": "4s"}, nil,
			32, 4 * time.Second},
		{"flags", map[string]string{"NOWSERVING_LISTEN_MAX_PENDING": "32"},
			[]string{"--listen-max-pending=16", "--listen-handshake-timeout=3500ms"}, 16, 3500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := parseFlags(t, tt.args)
			c, err := load([]byte(file), Opts{Flags: fs, LookupEnv: env(t, tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			if c.Listen.MaxPending != tt.pending || c.Listen.HandshakeTimeout != tt.timeout {
				t.Errorf("max_pending %d handshake_timeout %s, want %d %s",
					c.Listen.MaxPending, c.Listen.HandshakeTimeout, tt.pending, tt.timeout)
			}
		})
	}
}

func TestBadEnvNamesKey(t *testing.T) {
	_, err := load([]byte(minimal), Opts{LookupEnv: env(t, map[string]string{
		"NOWSERVING_LISTEN_HEARTBEAT": "often",
		"NOWSERVING_STORE_DRIVER":     "oracle",
	})})
	want := []string{
		`listen.heartbeat: invalid duration "often" (want e.g. 90s, 5m, 1h30m)`,
		`store.driver: must be sqlite, postgres or mysql, got "oracle"`,
	}
	if got := problemStrings(t, err); !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSecretEnv(t *testing.T) {
	y := minimal + `
devices:
  - { id: k, role: kiosk, site: s, secret_env: KIOSK_SECRET }
`
	c, err := load([]byte(y), Opts{LookupEnv: env(t, map[string]string{"KIOSK_SECRET": "a-long-enough-secret"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Devices[0].Secret; got != "a-long-enough-secret" {
		t.Errorf("secret = %q", got)
	}
}

func problemStrings(t *testing.T, err error) []string {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v, want *Error", err)
	}
	var out []string
	for _, p := range ce.Problems {
		out = append(out, p.String())
	}
	return out
}

// badFiles lists the files under testdata/bad, failing the test when
// there are none.
func badFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	return files
}

// TestBadFiles checks every file under testdata/bad against its golden
// error text (regenerate with go test -run TestBadFiles -update).
func TestBadFiles(t *testing.T) {
	for _, f := range badFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(Opts{File: f, LookupEnv: env(t, map[string]string{
				"SHORT_SECRET": "tiny", "K3_SECRET": "0123456789abcdef",
			})})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want *Error", err)
			}
			golden.Assert(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

// TestBadFileMessages pins the messages the design promises, independently
// of the golden files, so that -update cannot silently accept a worse text.
func TestBadFileMessages(t *testing.T) {
	tests := []struct{ file, want string }{
		{"unknown_key", "stor: unknown key (did you mean store?)"},
		{"unknown_key", "store.dns: unknown key (did you mean dsn?)"},
		{"unknown_key", "sites[0].services[0].colour: unknown key"},
		{"unknown_key", "sites[0].services[0].dailycap: unknown key (did you mean daily_cap?)"},
		{"width", "sites[0].services[1].width: must be 1..6, got 9"},
		{"width", "sites[0].services[3].daily_cap: 500 does not fit width 2 (at most 99)"},
		{"devices", "devices[2].counter: keypad needs a counter"},
		{"devices", `devices[3].counter: unknown counter "9" in site "s"`},
		{"devices", "devices[4].counter: only a keypad has a counter (role display)"},
		{"devices", `devices[7].id: duplicate device id "k1" (also devices[0])`},
		{"devices", "devices[9].secret_env: environment variable NOT_SET_ANYWHERE is not set"},
		{"timezone", `sites[0].timezone: unknown time zone "Mars/Base"`},
		{"timezone", `sites[0].rollover: want HH:MM, got "4am"`},
		{"timezone", "sites[1].rollover: must be before 24:00, got 24:00"},
		{"duplicates", `sites[0].services[1].code: duplicate service code "A" (also sites[0].services[0])`},
		{"duplicates", `sites[0].counters[1].id: duplicate counter id "1" (also sites[0].counters[0])`},
		{"duplicates", `sites[1].id: duplicate site id "s" (also sites[0])`},
		{"counters", `sites[0].counters[0].services[1].service: unknown service "Z" in site "s"`},
		{"counters", `sites[0].services[2]: no counter serves service "C"`},
		{"hours", "sites[0].services[0].hours[0].close: must be after open 17:00, got 07:30 (split a window across midnight in two)"},
		{"hours", `sites[0].services[0].hours[2].days[0]: unknown day "fry" (want mon, tue, wed, thu, fri, sat or sun)`},
		{"tls", "listen.tls.key: required when listen.tls.cert is set"},
		{"tls", "listen.http_tls.cert: required when listen.http_tls.key is set"},
		{"limits", "listen.max_pending: must be at least 1, got 0"},
		{"durations", `sites[0].services[0].avg_service: invalid duration "5 minutes" (want e.g. 90s, 5m, 1h30m)`},
		{"durations", `listen.heartbeat: duration 10 needs a unit, e.g. "10s" or "10m"`},
		{"names", "sites[0].name.zh: missing (site languages: en, zh)"},
		{"names", `sites[0].languages[2]: want a lowercase language tag such as "en" or "zh", got "EN"`},
		{"types", `store.batch: want a whole number, got "many"`},
		{"syntax", "yaml: line 1: did not find expected '-' indicator"},
		{"empty", "sites: at least one site is required"},
		{"notify", "notify.attempts: must be 1..100, got 0"},
		{"notify", `notify.commands[0].name: duplicate receiver name "his" (also notify.webhooks[0].name)`},
		{"notify", `notify.webhooks[0].secret: must be at least 16 characters, got 5 (or use secret_env)`},
		{"reports", `notify.emails[0].smtp: must be host:port, got "mail.example.org"`},
		{"reports", `notify.emails[0].from: must be an e-mail address, got "not an address"`},
		{"reports", "notify.emails[0].to: required: at least one address"},
		{"reports", "notify.emails[0].username: required with a password"},
		{"reports", `notify.emails[0].start_tls: must be auto, always or never, got "sometimes"`},
		{"reports", `notify.emails[1].to[1]: must be an e-mail address, got "@@"`},
		{"reports", `reports.schedules[1].name: duplicate schedule name "daily"`},
		{"reports", `reports.schedules[1].site: unknown site "x"`},
		{"reports", `reports.schedules[1].every: must be day or week, got "month"`},
		{"reports", `reports.schedules[1].at: must be a time of day HH:MM, got "7am"`},
		{"reports", `reports.schedules[1].format: must be one of csv, json, table, got "pdf"`},
		{"reports", `reports.schedules[1].to[0]: no receiver "nobody" in notify.webhooks, notify.commands or notify.emails`},
		{"reports", `reports.schedules[2].name: must be 1 to 32 lower-case letters, digits or dashes, got "Weekly"`},
		{"reports", "reports.schedules[2].to: required: the receivers of the notify section to send it to"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.want, func(t *testing.T) {
			_, err := Load(Opts{File: "testdata/bad/" + tt.file + ".yaml", LookupEnv: noEnv})
			got := problemStrings(t, err)
			if !slices.Contains(got, tt.want) {
				t.Errorf("problems:\n%s\nwant one to be:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(Opts{File: "testdata/does-not-exist.yaml", LookupEnv: noEnv})
	var ce *Error
	if err == nil || errors.As(err, &ce) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a wrapped os.ErrNotExist", err)
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in   string
		want Clock
		ok   bool
	}{
		{"00:00", Clock{0, 0}, true},
		{"04:00", Clock{4, 0}, true},
		{"23:59", Clock{23, 59}, true},
		{"24:00", Clock{24, 0}, true},
		{"24:01", Clock{}, false},
		{"4:00", Clock{}, false},
		{"12:60", Clock{}, false},
		{"12-00", Clock{}, false},
		{"", Clock{}, false},
	}
	for _, tt := range tests {
		got, err := ParseClock(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseClock(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestKeyLess(t *testing.T) {
	keys := []string{"sites[10].id", "sites[2].id", "devices[1]", "sites[2].name", "sites[1]"}
	slices.SortFunc(keys, func(a, b string) int {
		if keyLess(a, b) {
			return -1
		}
		if keyLess(b, a) {
			return 1
		}
		return 0
	})
	want := []string{"devices[1]", "sites[1]", "sites[2].id", "sites[2].name", "sites[10].id"}
	if !slices.Equal(keys, want) {
		t.Errorf("sorted = %v, want %v", keys, want)
	}
}

func TestValidateByHand(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/bank.yaml", LookupEnv: bankEnv})
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate after Load: %v", err)
	}
	c.Sites[0].Services[0].Width = 7
	c.Devices[1].Counter = ""
	want := "config: 2 problems:\n\tsites[0].services[0].width: must be 1..6, got 7\n\tdevices[1].counter: keypad needs a counter"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v\nwant %s", err, want)
	}
}

// TestEveryScalarKeyOverrides walks every scalar key outside a list: each
// has a usage, a flag and a variable named after it, and a value given by
// either reaches the field the key names (the flag winning).
func TestEveryScalarKeyOverrides(t *testing.T) {
	all := Overrides()
	if len(all) < 28 {
		t.Fatalf("%d overridable keys, want every scalar key (store, listen, log, http, notify)", len(all))
	}
	for _, want := range []string{"listen.rate_limit", "http.public_url", "notify.backoff.max", "listen.http_tls.key"} {
		if !slices.ContainsFunc(all, func(o Override) bool { return o.Key == want }) {
			t.Errorf("key %s is not overridable", want)
		}
	}
	for _, o := range all {
		t.Run(o.Key, func(t *testing.T) {
			if o.Usage == "" {
				t.Errorf("field of %s has no usage tag", o.Key)
			}
			if o.Flag != strings.NewReplacer(".", "-", "_", "-").Replace(o.Key) || o.Env != EnvName(o.Key) {
				t.Errorf("flag %s env %s", o.Flag, o.Env)
			}
			envVal, flagVal, want := sample(o, 1), sample(o, 2), sample(o, 2)
			fs := parseFlags(t, []string{"--" + o.Flag + "=" + flagVal})
			for _, tc := range []struct {
				name string
				opts Opts
				want string
			}{
				{"env", Opts{LookupEnv: env(t, map[string]string{o.Env: envVal})}, envVal},
				{"flag over env", Opts{Flags: fs, LookupEnv: env(t, map[string]string{o.Env: envVal})}, want},
			} {
				tc.opts.Only = []string{"-"} // no validation: the values need not make a working daemon
				c, err := load([]byte(minimal), tc.opts)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got := fieldText(t, c, o.Key); got != tc.want {
					t.Errorf("%s: %s = %s, want %s", tc.name, o.Key, got, tc.want)
				}
			}
		})
	}
}

// sample is a value n for key o's type, as a flag or variable writes it.
func sample(o Override, n int) string {
	switch {
	case o.typ == durationType:
		return (time.Duration(n) * 7 * time.Second).String()
	case o.typ.Kind() == reflect.Int:
		return strconv.Itoa(n * 7)
	case o.typ.Kind() == reflect.Float64:
		return strconv.FormatFloat(float64(n)*7.5, 'g', -1, 64)
	case o.typ.Kind() == reflect.Bool:
		return strconv.FormatBool(n%2 == 0)
	}
	return fmt.Sprintf("value-%d", n)
}

// fieldText is the field key names in c, written as sample writes it.
func fieldText(t *testing.T, c *Config, key string) string {
	t.Helper()
	v := reflect.ValueOf(*c)
	for _, p := range strings.Split(key, ".") {
		f, ok := fieldByTag(v.Type(), p)
		if !ok {
			t.Fatalf("no field %s of %s", p, key)
		}
		v = v.FieldByIndex(f.Index)
	}
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	case v.Kind() == reflect.Int:
		return strconv.Itoa(int(v.Int()))
	case v.Kind() == reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case v.Kind() == reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return v.String()
}

// TestEnvWarnings: a NOWSERVING_* variable that sets nothing is named
// with the closest key's variable; the test switches and the variables
// the file's *_env keys name are not.
func TestEnvWarnings(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/bank.yaml", LookupEnv: bankEnv})
	got := EnvWarnings([]string{"PATH=/bin", "NOWSERVING_LISTEN_RATELIMIT=0", "NOWSERVING_STORE_DSN=x",
		"NOWSERVING_BANK_API_TOKEN=t", "NOWSERVING_SKIP_DB=1", "NOWSERVING_TEST_LOG=1", "NOWSERVING_FROBNICATE=1"}, c)
	want := []string{
		"environment variable NOWSERVING_LISTEN_RATELIMIT sets no configuration key (did you mean NOWSERVING_LISTEN_RATE_LIMIT?)",
		"environment variable NOWSERVING_FROBNICATE sets no configuration key",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestClientSkipsServerSecrets: sim and console read the bank's file
// without the API token only the daemon needs.
func TestClientSkipsServerSecrets(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	if _, err := Load(Opts{File: "../testdata/bank.yaml", LookupEnv: none}); err == nil || !strings.Contains(err.Error(), "NOWSERVING_BANK_API_TOKEN") {
		t.Errorf("server load without the token: %v, want an error naming it", err)
	}
	if _, err := Load(Opts{File: "../testdata/bank.yaml", LookupEnv: none, Client: true}); err != nil {
		t.Errorf("client load without the token: %v", err)
	}
}

func TestLogger(t *testing.T) {
	var b strings.Builder
	l := Log{Level: "warn", Format: "json"}.NewLogger(&b)
	l.Info("hidden")
	l.Warn("shown", "k", 1)
	if s := b.String(); strings.Contains(s, "hidden") || !strings.Contains(s, `"msg":"shown"`) {
		t.Errorf("log output = %q", s)
	}
}

// bankEnv is the environment of the bank example: its API token.
func bankEnv(k string) (string, bool) {
	if k == "NOWSERVING_BANK_API_TOKEN" {
		return "bank-test-token-0123456789", true
	}
	return "", false
}

// TestBindFlagsUnder: a command binds only the flags of its sections.
func TestBindFlagsUnder(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	BindFlagsUnder(fs, "store")
	if fs.Lookup("store-dsn") == nil || fs.Lookup("listen-protocol") != nil || fs.Lookup("log-level") != nil {
		t.Errorf("BindFlagsUnder(store) bound %v", fs.FlagUsages())
	}
}

// TestLoadOnly: Only validates the sections named, so a command needing
// the store loads it from the environment without a file of sites.
func TestLoadOnly(t *testing.T) {
	t.Setenv("NOWSERVING_STORE_DRIVER", "postgres")
	t.Setenv("NOWSERVING_STORE_DSN", "postgres://x@h/db")
	c, err := Load(Opts{Only: []string{"store"}, LookupEnv: noEnv})
	if err != nil || c.Store.Driver != DriverPostgres || c.Store.DSN != "postgres://x@h/db" {
		t.Fatalf("Load(Only store) = %+v, %v", c, err)
	}
	t.Setenv("NOWSERVING_STORE_DRIVER", "oracle")
	if _, err := Load(Opts{Only: []string{"store"}, LookupEnv: noEnv}); err == nil || !strings.Contains(err.Error(), "store.driver: must be sqlite, postgres or mysql") {
		t.Errorf("Load(Only store) with a bad driver: %v", err)
	}
}

// TestDeviceLang: a device's lang is one of its site's languages.
func TestDeviceLang(t *testing.T) {
	y := minimal + `
devices:
  - { id: kp, role: keypad, site: s, counter: "1", secret: a-long-enough-secret, lang: en }
  - { id: kp2, role: keypad, site: s, counter: "1", secret: a-long-enough-secret, lang: zh }
`
	_, err := load([]byte(y), Opts{LookupEnv: noEnv})
	want := []string{`devices[1].lang: must be one of the site's languages [en], got "zh"`}
	if got := problemStrings(t, err); !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
}
