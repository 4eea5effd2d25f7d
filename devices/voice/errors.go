package voice

import "errors"

var (
	// ErrBadWAV is wrapped by every WAV decoding error.
	ErrBadWAV = errors.New("voice: bad wav")
	// ErrClosed is returned by [Announcer.Run] after [Announcer.Close].
	ErrClosed = errors.New("voice: announcer closed")
	// ErrUnknownLang is wrapped when a language code has no [Language] or engine.
	ErrUnknownLang = errors.New("voice: unknown language")
	// ErrNoSegment is wrapped when a voice pack has no recording for a token.
	ErrNoSegment = errors.New("voice: no segment for token")
)
