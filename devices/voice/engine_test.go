package voice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

func TestCommandEspeak(t *testing.T) {
	need.Program(t, "espeak-ng", "espeak-ng")
	e, err := NewCommand(DefaultCommandOpts())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Language{English(), Chinese()} {
		t.Run(l.Code, func(t *testing.T) {
			ph, err := l.Phrase(Call{Number: "A023", Counter: "5"})
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.Render(context.Background(), ph)
			if err != nil {
				t.Fatal(err)
			}
			if d := c.Duration(); d < time.Second || d > 8*time.Second {
				t.Errorf("espeak-ng spoke %v, want 1..8 s", d)
			}
			secs, rms := soxMeasure(t, c.Resample(Rate).WAV())
			if secs < 1 || rms < 0.02 {
				t.Errorf("sox: %.2f s, RMS %.4f; want >= 1 s, not silent", secs, rms)
			}
		})
	}
	// Through an announcer: the espeak-ng output (22050 Hz) is resampled.
	sink := &recordSink{played: make(chan string, 1)}
	o := DefaultOpts()
	o.Engine, o.Sink = e, sink
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := a.Render(context.Background(), Call{Number: "B7", Counter: "2"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeWAV(wav)
	if err != nil || c.Rate != Rate {
		t.Fatalf("announcement: %v, rate %d", err, c.Rate)
	}
}

func TestCommandTemplates(t *testing.T) {
	sh := need.Program(t, "dash", "sh")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.wav")
	if err := os.WriteFile(src, (&Clip{Rate: 8000, Samples: []int16{1, 2, 3}}).WAV(), 0o644); err != nil {
		t.Fatal(err)
	}
	ph := Phrase{Lang: "en", Speech: "hello"}
	tests := []struct {
		name    string
		tpl     string
		speech  string
		timeout time.Duration
		samples int
		errHas  string
		errIs   error
	}{
		// {out}: the command writes the file.
		{"out file", "cp " + src + " {out}", "", 0, 3, "", nil},
		// No {out}: the WAV comes from standard output; no {text}: speech on stdin.
		{"stdout", "cat " + src, "", 0, 3, "", nil},
		{"stdin speech", sh + " -c {text}", "cat " + src, 0, 3, "", nil},
		{"stderr in error", sh + " -c {text}", "echo engine-broke >&2; exit 3", 0, 0, "engine-broke", nil},
		{"timeout", sh + " -c {text}", "sleep 5", 50 * time.Millisecond, 0, "", context.DeadlineExceeded},
		{"not a wav", sh + " -c {text}", "echo hi", 0, 0, "", ErrBadWAV},
		{"no program", "/nonexistent/tts {text}", "", 0, 0, "nonexistent", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewCommand(CommandOpts{Commands: map[string]string{"en": tt.tpl}, Timeout: tt.timeout, TempDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			p := ph
			if tt.speech != "" {
				p.Speech = tt.speech
			}
			start := time.Now()
			c, err := e.Render(context.Background(), p)
			if tt.errHas != "" || tt.errIs != nil {
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), tt.errHas) || (tt.errIs != nil && !errors.Is(err, tt.errIs)) {
					t.Fatalf("err = %v, want %q / %v", err, tt.errHas, tt.errIs)
				}
				if time.Since(start) > 4*time.Second {
					t.Errorf("command not stopped by its timeout")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Samples) != tt.samples {
				t.Errorf("%d samples, want %d", len(c.Samples), tt.samples)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "nowserving-tts-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestNewCommandErrors(t *testing.T) {
	for _, cmds := range []map[string]string{nil, {"en": " "}, {"en": "tts {txt}"}} {
		if _, err := NewCommand(CommandOpts{Commands: cmds}); err == nil {
			t.Errorf("NewCommand(%q): no error", cmds)
		}
	}
	e, err := NewCommand(DefaultCommandOpts())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Render(context.Background(), Phrase{Lang: "fr", Speech: "x"}); !errors.Is(err, ErrUnknownLang) {
		t.Errorf("unknown language: %v", err)
	}
}
