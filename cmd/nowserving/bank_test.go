package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// bankEnv is the environment the bank example needs: its API token.
var bankEnv = map[string]string{"NOWSERVING_BANK_API_TOKEN": "bank-test-token-0123456789"}

// TestBankExample: the bank example is a whole branch (LED boards, a voice
// zone speaking pt then en, an API token from the environment), and the
// daemon says at start which services its hours close, and when they open.
func TestBankExample(t *testing.T) {
	cfg := loadTestConfig(t, "../../testdata/bank.yaml", bankEnv)
	if len(cfg.LED.Boards) != 5 || len(cfg.Voice.Zones) != 1 || strings.Join(cfg.Voice.Zones[0].Langs, ",") != "pt,en" {
		t.Errorf("bank example: %d boards, zones %+v; want 5 boards and a pt,en zone", len(cfg.LED.Boards), cfg.Voice.Zones)
	}
	if len(cfg.HTTP.Tokens) != 1 || cfg.HTTP.Tokens[0].Token != bankEnv["NOWSERVING_BANK_API_TOKEN"] {
		t.Errorf("bank example tokens %+v, want the one from NOWSERVING_BANK_API_TOKEN", cfg.HTTP.Tokens)
	}
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Time
		want []string
	}{
		// Saturday noon: every service closed until Monday 10:00.
		{time.Date(2026, 12, 5, 12, 0, 0, 0, sp), []string{`service=P opens="Mon 2026-12-07 10:00 -03"`, "service=B", "service=V"}},
		// Tuesday 08:00: they open at 10:00 the same day.
		{time.Date(2026, 12, 1, 8, 0, 0, 0, sp), []string{`service=P opens="Tue 2026-12-01 10:00 -03"`}},
		// Tuesday 11:00: open, nothing said.
		{time.Date(2026, 12, 1, 11, 0, 0, 0, sp), nil},
	} {
		eng, err := queue.New(queue.Opts{Store: storetest.SQLite(t), Sites: sites(cfg), Clock: storetest.FixedClock(tc.at).Now})
		if err != nil {
			t.Fatal(err)
		}
		var buf logtest.Buffer
		daemon.LogClosedServices(buf.Logger(), eng)
		_ = eng.Close(context.Background())
		got := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) || !strings.Contains(got, "service closed by its hours") {
				t.Errorf("at %v: log %q lacks %q", tc.at, got, w)
			}
		}
		if tc.want == nil && got != "" {
			t.Errorf("at %v (open): logged %q", tc.at, got)
		}
	}
}
