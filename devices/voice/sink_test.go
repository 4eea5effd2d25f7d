package voice

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

func TestDirSink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	now := time.Date(2026, 11, 29, 19, 5, 1, 123e6, time.UTC)
	s, err := NewDirSink(dir, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	wav := (&Clip{Rate: Rate, Samples: []int16{1, 2}}).WAV()
	for _, name := range []string{"A023-5", "A023-5", "../../etc/x", ""} {
		if err := s.Play(context.Background(), wav, name); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || string(b) != string(wav) {
			t.Errorf("%s: content differs (%v)", e.Name(), err)
		}
	}
	want := []string{
		"20261129-190501.123-A023-5-2.wav",
		"20261129-190501.123-A023-5.wav",
		"20261129-190501.123-call.wav",
		"20261129-190501.123-etcx.wav",
	}
	if !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Play(ctx, wav, "x"); err == nil {
		t.Error("Play with cancelled ctx: no error")
	}
	if _, err := NewDirSink("", nil); err == nil {
		t.Error("NewDirSink(\"\"): no error")
	}
}

func TestCommandSink(t *testing.T) {
	sh := need.Program(t, "dash", "sh")
	dir := t.TempDir()
	wav := (&Clip{Rate: Rate, Samples: []int16{5, 6, 7}}).WAV()
	dst := filepath.Join(dir, "played.wav")
	for _, tpl := range []string{
		"cp {file} " + dst, // the file placeholder
		"tee " + dst,       // the WAV on standard input
	} {
		os.Remove(dst)
		s, err := NewCommandSink(tpl, 5*time.Second, dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Play(context.Background(), wav, "A1-1"); err != nil {
			t.Fatalf("%s: %v", tpl, err)
		}
		if b, err := os.ReadFile(dst); err != nil || string(b) != string(wav) {
			t.Errorf("%s: played bytes differ (%v)", tpl, err)
		}
	}
	s, err := NewCommandSink(sh+" -c false {file}", time.Second, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Play(context.Background(), wav, "A1-1"); err == nil || !strings.Contains(err.Error(), "A1-1") {
		t.Errorf("failing command: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "nowserving-play-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	for _, bad := range []string{"", "aplay {wav}"} {
		if _, err := NewCommandSink(bad, 0, ""); err == nil {
			t.Errorf("NewCommandSink(%q): no error", bad)
		}
	}
}
