// Package voice speaks "now serving" announcements: "Number A023, please go to
// counter 5" / "请 A023 号 到 5 号窗口".
//
// A [Call] is turned into a [Phrase] per language by a [Language]: the display
// text, and a token sequence ("number", "A", "0", "2", "3",
// "please_go_to_counter", "5") that every [Engine] renders. Two engines ship:
//
//   - [Pack]: recorded segments, one WAV per token, embedded in the binary
//     ([EmbeddedPack]) and joined in pure Go, so announcements work with no
//     external program. The pack is made by pack/generate.sh (espeak-ng + sox).
//   - [Command]: an external TTS command such as espeak-ng or piper, fed the
//     spoken text of the tokens (tone-numbered pinyin for Mandarin, through
//     espeak-ng's cmn-latn-pinyin voice).
//
// Audio is PCM 16-bit mono: [DecodeWAV] reads the RIFF/WAVE files the engines
// produce and [Clip.WAV] writes them. A [Sink] plays the result: an audio
// device command ([CommandSink], e.g. aplay) or WAV files in a folder
// ([DirSink]).
//
// An [Announcer] serves one zone: one announcement at a time, in call order,
// with an optional chime and repeat, over a bounded queue that never blocks the
// caller and counts what it drops.
//
// This package does not know the queue domain: the dispatcher in package
// devices maps queue events onto [Call] values.
package voice
