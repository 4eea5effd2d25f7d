#!/usr/bin/env bash
# generate.sh rebuilds the voice pack embedded by package voice, one
# language per words file: LANG.words next to this script lists, one a
# line, a token and the text espeak-ng speaks for it (TAB between), and a
# "# voice: V" line naming the espeak-ng voice. Each token becomes LANG/TOKEN.wav.
#
#   ./generate.sh            every language (*.words) and common/
#   ./generate.sh pt         only pt/ (adding a language: write pt.words, run this)
#
# common/ holds the chime and the letters A-Z in English (used by any
# language without letters of its own). It needs espeak-ng and sox (Debian
# packages espeak-ng and sox). Every file is PCM 16-bit mono at 16 kHz with
# leading and trailing silence trimmed. The pack is committed; rerun this
# only to change it, then review the sizes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

speed=${VOICE_SPEED:-160}

# seg VOICE DIR NAME TEXT: speak TEXT with VOICE into DIR/NAME.wav, trimmed and resampled.
seg() {
	local voice=$1 dir=$2 name=$3 text=$4
	mkdir -p "$here/$dir"
	espeak-ng -v "$voice" -s "$speed" -w "$tmp/raw.wav" "$text"
	sox "$tmp/raw.wav" -b 16 -c 1 "$here/$dir/$name.wav" \
		silence 1 0.01 0.5% reverse silence 1 0.01 0.5% reverse \
		gain -n -6 rate 16k norm -3
}

# lang LANG: every token of LANG.words into LANG/.
lang() {
	local l=$1 file="$here/$1.words" voice
	[ -f "$file" ] || { echo "generate.sh: no $file (token<TAB>text lines and a '# voice: V' line)" >&2; exit 1; }
	voice=$(sed -n 's/^# voice: *//p' "$file" | head -n 1)
	[ -n "$voice" ] || { echo "generate.sh: $file has no '# voice: V' line" >&2; exit 1; }
	rm -rf "${here:?}/$l"
	while IFS=$'\t' read -r token text; do
		case $token in '' | '#'*) continue ;; esac
		seg "$voice" "$l" "$token" "$text"
	done <"$file"
	du -sh "$here/$l"
}

common() {
	rm -rf "$here/common"
	mkdir -p "$here/common"
	# Chime: two falling tones (G5 then E5) with soft edges.
	sox -n -r 16000 -b 16 -c 1 "$tmp/t1.wav" synth 0.30 sine 784 fade q 0.01 0.30 0.12 vol 0.5
	sox -n -r 16000 -b 16 -c 1 "$tmp/t2.wav" synth 0.50 sine 659 fade q 0.01 0.50 0.30 vol 0.5
	sox "$tmp/t1.wav" "$tmp/t2.wav" "$here/common/chime.wav"
	for l in A B C D E F G H I J K L M N O P Q R S T U V W X Y Z; do
		seg en common "$l" "$l"
	done
	du -sh "$here/common"
}

if [ $# -eq 0 ]; then
	common
	for f in "$here"/*.words; do
		lang "$(basename "$f" .words)"
	done
else
	for l in "$@"; do
		if [ "$l" = common ]; then common; else lang "$l"; fi
	done
fi
