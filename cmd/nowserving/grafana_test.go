package main

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// TestGrafanaDashboard: every metric the shipped Grafana dashboard
// (deploy/grafana/nowserving.json) names is registered by a running
// daemon. A name on /metrics is; one that shows only once it has values
// (the follow delay needs a second daemon) is when the daemon's registry
// refuses another descriptor of that name.
func TestGrafanaDashboard(t *testing.T) {
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(golden.Read(t, "../../deploy/grafana/nowserving.json"), &dash); err != nil {
		t.Fatalf("deploy/grafana/nowserving.json: %v", err)
	}
	used := map[string]string{} // metric → panel
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, m := range regexp.MustCompile(`nowserving_[a-z_]+`).FindAllString(q.Expr, -1) {
				used[m] = p.Title
			}
		}
	}
	if len(used) < 10 {
		t.Fatalf("the dashboard names %d metrics", len(used))
	}
	names, reg := daemonRegistry(t)
	if registered(reg, "nowserving_no_such_metric") {
		t.Fatal("the registry probe finds a metric nobody registered")
	}
	for m, panel := range used {
		base := m
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suf)
		}
		if !names[base] && !registered(reg, base) {
			t.Errorf("panel %q uses %s, which the daemon does not register", panel, m)
		}
	}
}

// registered reports whether reg has a metric named name: it refuses a
// descriptor of that name registered again.
func registered(reg *prometheus.Registry, name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe of TestGrafanaDashboard"})
	err := reg.Register(probe)
	if err == nil {
		reg.Unregister(probe)
		return false
	}
	var are prometheus.AlreadyRegisteredError
	return errors.As(err, &are) || strings.Contains(err.Error(), "same fully-qualified name")
}
