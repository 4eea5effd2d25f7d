package voice

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"
)

//go:embed pack/common/*.wav pack/en/*.wav pack/zh/*.wav pack/pt/*.wav pack/*.words
var packFS embed.FS

// ChimeToken is the token of the chime segment, kept in the pack's common folder.
const ChimeToken = "chime"

// tokenGap is the silence put between two segments of a phrase.
const tokenGap = 70 * time.Millisecond

// Pack is the recorded-segment [Engine]: one WAV file per token, looked up as
// <lang>/<token>.wav, then common/<token>.wav (the chime and the letters,
// shared by every language). Segments are decoded once and cached. A Pack is
// safe for concurrent use.
type Pack struct {
	fsys fs.FS
	dir  string // prefix of every path in fsys

	mu    sync.Mutex
	cache map[string]*Clip
}

// NewPack returns a pack reading segments from fsys.
func NewPack(fsys fs.FS) *Pack {
	return &Pack{fsys: fsys, cache: map[string]*Clip{}}
}

// EmbeddedPack returns the voice pack built into the binary (English "en",
// Mandarin "zh" and Portuguese "pt", 16 kHz), made by pack/generate.sh from
// pack/LANG.words.
func EmbeddedPack() *Pack {
	p := NewPack(packFS)
	p.dir = "pack/"
	return p
}

// Segment returns the recording of token in lang, at the pack's own rate.
func (p *Pack) Segment(lang, token string) (*Clip, error) {
	if token == "" || strings.ContainsAny(token, "/\\") || !fs.ValidPath(token) ||
		lang != "" && (strings.ContainsAny(lang, "/\\") || !fs.ValidPath(lang)) {
		return nil, fmt.Errorf("%w %q in %q", ErrNoSegment, token, lang)
	}
	key := lang + "/" + token
	p.mu.Lock()
	c, ok := p.cache[key]
	p.mu.Unlock()
	if ok {
		return c, nil
	}
	var b []byte
	var err error
	names := []string{"common/" + token + ".wav"}
	if lang != "" {
		names = append([]string{lang + "/" + token + ".wav"}, names...)
	}
	for _, name := range names {
		b, err = fs.ReadFile(p.fsys, p.dir+name)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %q in %q", ErrNoSegment, token, lang)
	}
	if err != nil {
		return nil, fmt.Errorf("voice: read segment %s: %w", key, err)
	}
	c, err = DecodeWAV(b)
	if err != nil {
		return nil, fmt.Errorf("voice: decode segment %s: %w", key, err)
	}
	p.mu.Lock()
	p.cache[key] = c
	p.mu.Unlock()
	return c, nil
}

// Render joins the segments of ph's tokens, with a short gap between them,
// into one clip at [Rate].
func (p *Pack) Render(ctx context.Context, ph Phrase) (*Clip, error) {
	if len(ph.Tokens) == 0 {
		return nil, fmt.Errorf("voice: pack render %s: no tokens", ph.Lang)
	}
	parts := make([]*Clip, 0, 2*len(ph.Tokens))
	for i, tok := range ph.Tokens {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("voice: pack render: %w", err)
		}
		c, err := p.Segment(ph.Lang, tok)
		if err != nil {
			return nil, fmt.Errorf("voice: pack render %s: %w", ph.Lang, err)
		}
		if i > 0 {
			parts = append(parts, Silence(Rate, tokenGap))
		}
		parts = append(parts, c)
	}
	return Concat(Rate, parts...), nil
}

// Check reports the first token l can produce that has no segment in p for
// l's language: template words, numerals and the letters A-Z.
func (p *Pack) Check(l Language) error {
	toks := []string{ChimeToken}
	for w := range l.Words {
		toks = append(toks, w)
	}
	for c := 'A'; c <= 'Z'; c++ {
		toks = append(toks, string(c))
	}
	for _, tok := range toks {
		if _, err := p.Segment(l.Code, tok); err != nil {
			return fmt.Errorf("voice: pack check %s: %w", l.Code, err)
		}
	}
	return nil
}
