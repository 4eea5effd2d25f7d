package config

import (
	"fmt"
	"reflect"
	"strings"
)

// notConfig are NOWSERVING_* variables that are no configuration key: the
// test and CI switches, the browser report --format pdf prints with, and
// what a notify command is given.
var notConfig = []string{"NOWSERVING_TEST_", "NOWSERVING_SKIP_", "NOWSERVING_ARTIFACTS", "NOWSERVING_HALL_DAY_", "NOWSERVING_CHROMIUM",
	"NOWSERVING_EVENT_ID", "NOWSERVING_EVENT_TYPE", "NOWSERVING_SITE", "NOWSERVING_VERSION", "NOWSERVING_ATTEMPT"}

// EnvWarnings names each NOWSERVING_* variable of environ ("KEY=value"
// lines, as os.Environ) that sets no key, with the closest key's variable:
// a misspelt override is otherwise silently ignored. Variables c's *_env
// keys name (secrets, tokens) and those of notConfig are not warned of.
func EnvWarnings(environ []string, c *Config) []string {
	known := map[string]bool{}
	var names []string
	for _, o := range Overrides() {
		known[o.Env] = true
		names = append(names, o.Env)
	}
	if c != nil {
		for _, e := range envRefs(reflect.ValueOf(*c)) {
			known[e] = true
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || known[name] || ignored(name) {
			continue
		}
		msg := fmt.Sprintf("environment variable %s sets no configuration key", name)
		if best := closest(name, names); best != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", best)
		}
		out = append(out, msg)
	}
	return out
}

func ignored(name string) bool {
	for _, p := range notConfig {
		if name == p || strings.HasSuffix(p, "_") && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// closest is the name of names nearest to name by edit distance, "" when
// none is within a third of its length.
func closest(name string, names []string) string {
	best, bestDist := "", len(name)/3+1
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// envRefs are the values of every string field whose key ends in "_env"
// under v (devices[].secret_env, http.tokens[].token_env...).
func envRefs(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if strings.HasSuffix(f.Tag.Get("mapstructure"), "_env") && f.Type.Kind() == reflect.String {
				if s := v.Field(i).String(); s != "" {
					out = append(out, s)
				}
				continue
			}
			out = append(out, envRefs(v.Field(i))...)
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, envRefs(v.Index(i))...)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			out = append(out, envRefs(v.Elem())...)
		}
	}
	return out
}
