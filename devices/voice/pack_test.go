package voice

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedPackComplete(t *testing.T) {
	p := EmbeddedPack()
	for _, l := range DefaultLanguages() {
		if err := p.Check(l); err != nil {
			t.Error(err)
		}
	}
	total := 0
	err := fs.WalkDir(packFS, "pack", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".words") {
			return err
		}
		b, err := fs.ReadFile(packFS, path)
		if err != nil {
			return err
		}
		total += len(b)
		c, err := DecodeWAV(b)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if c.Rate != Rate || len(c.Samples) == 0 {
			t.Errorf("%s: rate %d, %d samples; want %d Hz, not empty", path, c.Rate, len(c.Samples), Rate)
		}
		// sox wrote these with the canonical header: mono, 16-bit, PCM.
		if string(b[20:24]) != "\x01\x00\x01\x00" || string(b[34:36]) != "\x10\x00" {
			t.Errorf("%s: not PCM 16-bit mono", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 || total >= 2<<20 {
		t.Errorf("pack is %d bytes, want 0 < size < 2 MiB", total)
	}
}

func TestPackSegmentErrors(t *testing.T) {
	p := EmbeddedPack()
	for _, tc := range []struct{ lang, tok string }{
		{"en", "nope"}, {"en", "../en/5"}, {"en", ""}, {"../pack", "5"}, {"fr", "number"}, {"en", `a\b`},
	} {
		if _, err := p.Segment(tc.lang, tc.tok); !errors.Is(err, ErrNoSegment) {
			t.Errorf("Segment(%q, %q) = %v, want ErrNoSegment", tc.lang, tc.tok, err)
		}
	}
	// Letters are shared by every language, from common/.
	if _, err := p.Segment("fr", "A"); err != nil {
		t.Errorf("common letter: %v", err)
	}
	broken := NewPack(fstest.MapFS{"en/x.wav": {Data: []byte("RIFFjunk")}})
	if _, err := broken.Segment("en", "x"); !errors.Is(err, ErrBadWAV) {
		t.Errorf("broken segment: %v, want ErrBadWAV", err)
	}
	if _, err := p.Render(context.Background(), Phrase{Lang: "en"}); err == nil {
		t.Error("Render with no tokens: no error")
	}
}

func TestPackRenderJoinsSegments(t *testing.T) {
	p := EmbeddedPack()
	ph, err := English().Phrase(Call{Number: "A023", Counter: "5"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Render(context.Background(), ph)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, tok := range ph.Tokens {
		s, err := p.Segment("en", tok)
		if err != nil {
			t.Fatal(err)
		}
		want += len(s.Samples)
		if i > 0 {
			want += len(Silence(Rate, tokenGap).Samples)
		}
	}
	if got.Rate != Rate || len(got.Samples) != want {
		t.Errorf("rendered %d samples at %d Hz, want %d at %d", len(got.Samples), got.Rate, want, Rate)
	}
	back, err := DecodeWAV(got.WAV())
	if err != nil || len(back.Samples) != want {
		t.Fatalf("rendered WAV does not decode: %v", err)
	}
}

// TestPackRenderSox checks the rendered announcements with sox: a plausible
// duration and not silent.
func TestPackRenderSox(t *testing.T) {
	tests := []struct {
		name     string
		opts     func(*Opts)
		call     Call
		min, max float64 // seconds
	}{
		{"en", func(o *Opts) { o.Langs = []string{"en"}; o.Chime = false }, Call{Number: "A023", Counter: "5"}, 2, 6},
		{"zh", func(o *Opts) { o.Langs = []string{"zh"}; o.Chime = false }, Call{Number: "A023", Counter: "5"}, 1.5, 6},
		{"en+zh chime", func(o *Opts) {}, Call{Number: "B105", Counter: "12"}, 5, 14},
		{"repeat 2", func(o *Opts) { o.Langs = []string{"en"}; o.Repeat = 2 }, Call{Number: "A1", Counter: "1"}, 4, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOpts()
			o.Sink = &recordSink{}
			tt.opts(&o)
			a, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			wav, err := a.Render(context.Background(), tt.call)
			if err != nil {
				t.Fatal(err)
			}
			secs, rms := soxMeasure(t, wav)
			t.Logf("%.2f s, RMS %.3f", secs, rms)
			if secs < tt.min || secs > tt.max {
				t.Errorf("duration %.2f s, want %.1f..%.1f s", secs, tt.min, tt.max)
			}
			if rms < 0.02 {
				t.Errorf("RMS amplitude %.4f: silent", rms)
			}
		})
	}
}

// TestSoxMeasureSeesSilence shows the sox check can fail: silence is silent.
func TestSoxMeasureSeesSilence(t *testing.T) {
	secs, rms := soxMeasure(t, Silence(Rate, 1500*1e6).WAV())
	if secs < 1.49 || secs > 1.51 || rms != 0 {
		t.Errorf("silence: %.3f s, RMS %.4f; want 1.5 s, 0", secs, rms)
	}
	if !strings.HasPrefix(string(Silence(Rate, 0).WAV()), "RIFF") {
		t.Error("empty clip is not a WAV")
	}
}

func BenchmarkAnnouncerRender(b *testing.B) {
	o := DefaultOpts()
	o.Sink = &recordSink{}
	a, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	c := Call{Number: "A023", Counter: "5"}
	for b.Loop() {
		if _, err := a.Render(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}
