package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix starts every environment variable that overrides a key.
const EnvPrefix = "NOWSERVING_"

// Opts says where a configuration comes from. Precedence, highest first:
// changed flags, environment, file, defaults.
type Opts struct {
	// File is the YAML file; empty means defaults, environment and flags
	// only (which Validate rejects for want of a site).
	File string
	// Flags is a flag set on which BindFlags was called; only flags the
	// user changed override the file. Nil means no flags.
	Flags *pflag.FlagSet
	// LookupEnv reads the variables that *_env keys name
	// (devices[].secret_env, http.tokens[].token_env, ...); nil means
	// os.LookupEnv. The NOWSERVING_* overrides are read by viper from the
	// process environment.
	LookupEnv func(key string) (string, bool)
	// Only, when set, limits validation to these sections (e.g. "store"):
	// a command that needs only the database loads its settings from the
	// environment and flags without a file of sites.
	Only []string
	// Client loads the configuration for a client of the daemon (sim,
	// console): the server's own secrets (http.tokens[].token_env,
	// notify.webhooks[].secret_env) are neither read nor required, so the
	// variables holding them need only be set where the daemon runs.
	Client bool
}

// serverOnly are the sections a Client load does not check.
var serverOnly = []string{"http.tokens", "notify.webhooks"}

// EnvName returns the environment variable overriding a key path:
// "store.dsn" -> "NOWSERVING_STORE_DSN".
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Override is a key that environment and flags may set: every scalar key
// of Config outside a list, found by walking the struct tags, so a new key
// is settable from the start. Each such field carries a usage:"..." tag,
// the flag's help.
type Override struct {
	Key   string // key path: "listen.rate_limit"
	Flag  string // flag name: "listen-rate-limit"
	Env   string // environment variable: "NOWSERVING_LISTEN_RATE_LIMIT"
	Usage string
	typ   reflect.Type
	def   reflect.Value // the default, for the flag's help
}

// Overrides lists the keys settable by environment and flags, in the
// order of the struct fields.
func Overrides() []Override {
	d := DefaultConfig()
	applyDefaults(&d, func(string) bool { return false })
	var out []Override
	walkScalars(reflect.ValueOf(d), "", "", func(key, usage string, v reflect.Value) {
		out = append(out, Override{Key: key, Flag: strings.NewReplacer(".", "-", "_", "-").Replace(key),
			Env: EnvName(key), Usage: usage, typ: v.Type(), def: v})
	})
	return out
}

// walkScalars calls fn for every scalar field under struct value v (key
// path prefix, parent usage ctx), not descending into lists or maps.
func walkScalars(v reflect.Value, prefix, ctx string, fn func(key, usage string, v reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		fv := v.Field(i)
		if tag == ",squash" {
			walkScalars(fv, prefix, ctx, fn)
			continue
		}
		key := joinKey(prefix, tag)
		usage := f.Tag.Get("usage")
		switch {
		case f.Type == durationType || scalarKind(f.Type.Kind()):
			if ctx != "" {
				usage += " " + ctx
			}
			fn(key, usage, fv)
		case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Clock{}):
			walkScalars(fv, key, usage, fn)
		}
	}
}

func scalarKind(k reflect.Kind) bool {
	return k == reflect.String || k == reflect.Bool || k == reflect.Int || k == reflect.Float64
}

// BindFlags registers on fs one flag per overridable key (Overrides),
// named after the key: store.dsn is --store-dsn, listen.rate_limit
// --listen-rate-limit. Pass fs to Load in Opts.Flags. The caller owns
// --config.
func BindFlags(fs *pflag.FlagSet) { BindFlagsUnder(fs) }

// BindFlagsUnder is BindFlags for the keys of some sections only ("store",
// "listen", "log"; none: all), so a command's help lists only the flags
// that apply to it: migrate and check take only the store's.
func BindFlagsUnder(fs *pflag.FlagSet, sections ...string) {
	for _, o := range Overrides() {
		if len(sections) > 0 && !under(o.Key, sections) {
			continue
		}
		usage := o.Usage + " (env " + o.Env + ")"
		switch {
		case o.typ == durationType:
			fs.Duration(o.Flag, time.Duration(o.def.Int()), usage)
		case o.typ.Kind() == reflect.Int:
			fs.Int(o.Flag, int(o.def.Int()), usage)
		case o.typ.Kind() == reflect.Float64:
			fs.Float64(o.Flag, o.def.Float(), usage)
		case o.typ.Kind() == reflect.Bool:
			fs.Bool(o.Flag, o.def.Bool(), usage)
		default:
			fs.String(o.Flag, o.def.String(), usage)
		}
	}
}

// Load reads, overrides, completes with defaults and validates a
// configuration. Configuration mistakes come back as *Error listing every
// problem; I/O failures as other errors.
func Load(opts Opts) (*Config, error) {
	var data []byte
	if opts.File != "" {
		var err error
		data, err = os.ReadFile(opts.File)
		if err != nil {
			return nil, fmt.Errorf("config: read: %w", err)
		}
	}
	return load(data, opts)
}

func load(data []byte, opts Opts) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, err := readViper(data, opts)
	if err != nil {
		return nil, err
	}
	cfg, decoded := decode(v)
	cfg.resolveSecrets(lookup, &decoded)
	if !opts.Client {
		cfg.resolveTokens(lookup, &decoded)
		cfg.resolveNotify(lookup, &decoded)
	}

	// Validate what decoded, but say nothing more about a key that already
	// failed: its zero value would only produce a confusing second message.
	var failed []string
	for _, p := range decoded {
		if !strings.HasSuffix(p.Msg, msgUnknownKey) {
			failed = append(failed, p.Key)
		}
	}
	all := append(problems(nil), decoded...)
	for _, p := range cfg.validate() {
		if !under(p.Key, failed) {
			all = append(all, p)
		}
	}
	if len(opts.Only) > 0 || opts.Client {
		kept := all[:0]
		for _, p := range all {
			if (len(opts.Only) == 0 || under(p.Key, opts.Only)) && !(opts.Client && under(p.Key, serverOnly)) {
				kept = append(kept, p)
			}
		}
		all = kept
	}
	if len(all) > 0 {
		return nil, &Error{File: opts.File, Problems: all}
	}
	return cfg, nil
}

// readViper reads the file, then binds the environment and the changed
// flags over it.
func readViper(data []byte, opts Opts) (*viper.Viper, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if len(bytes.TrimSpace(data)) > 0 {
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			var pe viper.ConfigParseError
			if errors.As(err, &pe) && pe.Unwrap() != nil {
				err = pe.Unwrap()
			}
			return nil, &Error{File: opts.File, Problems: []Problem{{Msg: err.Error()}}}
		}
	}

	// Environment: viper reads NOWSERVING_<KEY> for every key that may be
	// overridden (BindEnv, so a key absent from the file is found too).
	v.SetEnvPrefix(strings.TrimSuffix(EnvPrefix, "_"))
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	for _, o := range Overrides() {
		if err := v.BindEnv(o.Key); err != nil {
			return nil, fmt.Errorf("config: bind environment: %w", err)
		}
	}

	// Flags: only those the user changed, so flag defaults never mask the
	// file.
	if opts.Flags != nil {
		byFlag := map[string]string{}
		for _, o := range Overrides() {
			byFlag[o.Flag] = o.Key
		}
		var bindErr error
		opts.Flags.Visit(func(f *pflag.Flag) {
			if key, ok := byFlag[f.Name]; ok && bindErr == nil {
				bindErr = v.BindPFlag(key, f)
			}
		})
		if bindErr != nil {
			return nil, fmt.Errorf("config: bind flags: %w", bindErr)
		}
	}
	return v, nil
}

// decode decodes v over the defaults and fills what it left unset; the
// problems are the keys that did not decode, in key order.
func decode(v *viper.Viper) (*Config, problems) {
	cfg := DefaultConfig()
	var md mapstructure.Metadata
	err := v.Unmarshal(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.DecodeHook = decodeHook()
		dc.Metadata = &md
	})
	var decoded problems
	if err != nil {
		decodeProblems(err, &decoded)
	}
	for _, k := range md.Unused { // keys no field takes: "sites[0].services[0].colour"
		parent, name := "", k
		if i := strings.LastIndex(k, "."); i >= 0 {
			parent, name = k[:i], k[i+1:]
		}
		if hint := suggest(parent, name); hint != "" {
			decoded.add(k, "%s (did you mean %s?)", msgUnknownKey, hint)
		} else {
			decoded.add(k, msgUnknownKey)
		}
	}
	sort.SliceStable(decoded, func(i, j int) bool { return keyLess(decoded[i].Key, decoded[j].Key) })
	set := make(map[string]bool, len(md.Keys))
	for _, k := range md.Keys {
		set[k] = true
	}
	applyDefaults(&cfg, func(key string) bool { return set[key] })
	return &cfg, decoded
}

// resolveSecrets reads each devices[].secret_env into the device's Secret.
func (c *Config) resolveSecrets(lookup func(string) (string, bool), ps *problems) {
	for i := range c.Devices {
		d := &c.Devices[i]
		fromEnv(lookup, keyf("devices[%d]", i), "secret", d.SecretEnv, &d.Secret, ps)
	}
}

// fromEnv reads the variable env (the value of k's field+"_env") into
// *val, the field it stands for; nothing when env is empty.
func fromEnv(lookup func(string) (string, bool), k, field, env string, val *string, ps *problems) {
	if env == "" {
		return
	}
	ek := k + "." + field + "_env"
	if *val != "" {
		ps.add(ek, "set %s or %s_env, not both", field, field)
		return
	}
	v, ok := lookup(env)
	if !ok {
		ps.add(ek, "environment variable %s is not set", env)
		return
	}
	*val = v
}

// under reports whether key is one of prefixes or inside one of them.
func under(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if key == p || p == "" ||
			strings.HasPrefix(key, p+".") || strings.HasPrefix(key, p+"[") {
			return true
		}
	}
	return false
}

const msgUnknownKey = "unknown key"

// decodeProblems turns a mapstructure error tree into Problems.
func decodeProblems(err error, ps *problems) {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		ps.add(e.Name(), "%s", e.Unwrap().Error())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			decodeProblems(inner, ps)
		}
	case interface{ Unwrap() error }:
		if inner := e.Unwrap(); inner != nil {
			decodeProblems(inner, ps)
			return
		}
		ps.add("", "%s", err.Error())
	default:
		ps.add("", "%s", err.Error())
	}
}

func joinKey(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// keyLess orders key paths with list indexes compared as numbers, so
// sites[2] sorts before sites[10].
func keyLess(a, b string) bool {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, ra := splitNum(a)
			nb, rb := splitNum(b)
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func splitNum(s string) (num, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	num = strings.TrimLeft(s[:i], "0")
	return num, s[i:]
}

// decodeHook converts YAML scalars into the typed fields, with messages an
// operator can act on: one converter per target type (decoders), then
// whole numbers for every int field.
func decodeHook() mapstructure.DecodeHookFuncType {
	return func(f, t reflect.Type, data any) (any, error) {
		if f == nil || data == nil {
			return data, nil
		}
		if conv, ok := decoders[t]; ok {
			return conv(f, data)
		}
		if t.Kind() == reflect.Int {
			return decodeInt(data)
		}
		return data, nil
	}
}

// decoder converts data of type f for one target type (none is an int).
type decoder func(f reflect.Type, data any) (any, error)

// decoders are the converters of decodeHook, by target type.
var decoders = map[reflect.Type]decoder{
	reflect.TypeOf(time.Duration(0)): decodeDuration,
	reflect.TypeOf(Clock{}): func(_ reflect.Type, data any) (any, error) {
		s, ok := data.(string)
		if !ok {
			return nil, fmt.Errorf("want a quoted \"HH:MM\", got %s", describe(data))
		}
		c, err := parseClock(s)
		if err != nil {
			return nil, err
		}
		return c, nil
	},
	reflect.TypeOf(time.Weekday(0)): func(_ reflect.Type, data any) (any, error) {
		s, ok := data.(string)
		if !ok {
			return nil, fmt.Errorf("want a day mon..sun, got %s", describe(data))
		}
		d, ok := weekdays[strings.ToLower(s)]
		if !ok {
			return nil, fmt.Errorf("unknown day %q (want mon, tue, wed, thu, fri, sat or sun)", s)
		}
		return d, nil
	},
	reflect.TypeOf(Names(nil)): func(f reflect.Type, data any) (any, error) {
		if f.Kind() != reflect.Map {
			return nil, fmt.Errorf("want a map of language to text such as {en: \"...\"}, got %s", describe(data))
		}
		return data, nil
	},
	reflect.TypeOf(CounterService{}): func(_ reflect.Type, data any) (any, error) {
		if s, ok := data.(string); ok {
			return map[string]any{"service": s}, nil
		}
		return data, nil
	},
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

var durationType = reflect.TypeOf(time.Duration(0))

func decodeDuration(f reflect.Type, data any) (any, error) {
	if f == durationType {
		return data, nil
	}
	if s, ok := data.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("invalid duration %q (want e.g. 90s, 5m, 1h30m)", s)
		}
		return d, nil
	}
	if isNumber(f.Kind()) {
		if reflect.ValueOf(data).IsZero() {
			return time.Duration(0), nil
		}
		return nil, fmt.Errorf("duration %v needs a unit, e.g. \"%vs\" or \"%vm\"", data, data, data)
	}
	return nil, fmt.Errorf("want a duration such as \"5m\", got %s", describe(data))
}

// decodeInt takes whole numbers only, also written as strings.
func decodeInt(data any) (any, error) {
	switch x := data.(type) {
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return nil, fmt.Errorf("want a whole number, got %q", x)
		}
		return n, nil
	case float64:
		if x != math.Trunc(x) {
			return nil, fmt.Errorf("want a whole number, got %v", x)
		}
	case bool:
		return nil, fmt.Errorf("want a whole number, got %v", x)
	}
	return data, nil
}

func isNumber(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

func describe(data any) string {
	switch data.(type) {
	case map[string]any, map[any]any:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", data)
}

// suggest returns the known key closest to an unknown key k found under the
// key path parent, or "" when none is close.
func suggest(parent, k string) string {
	t := reflect.TypeOf(Config{})
	for _, part := range strings.FieldsFunc(parent, func(r rune) bool { return r == '.' || r == '[' }) {
		if strings.HasSuffix(part, "]") { // a list index
			continue
		}
		f, ok := fieldByTag(t, part)
		if !ok {
			return ""
		}
		t = f.Type
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	best, bestDist := "", 3
	squash := func(s string) string { return strings.ReplaceAll(s, "_", "") }
	for _, f := range taggedFields(t) {
		tag := f.Tag.Get("mapstructure")
		if d := editDistance(squash(k), squash(tag)); d < bestDist {
			best, bestDist = tag, d
		}
	}
	return best
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for _, f := range taggedFields(t) {
		if f.Tag.Get("mapstructure") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// taggedFields returns the fields of struct type t that have a key, with
// those of ",squash" fields (led.DriverOpts) in their place.
func taggedFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		switch tag := f.Tag.Get("mapstructure"); {
		case tag == ",squash":
			out = append(out, taggedFields(f.Type)...)
		case tag != "" && tag != "-":
			out = append(out, f)
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
