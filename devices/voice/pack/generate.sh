#!/usr/bin/env bash
# generate.sh rebuilds the voice pack embedded by package voice.
#
# It needs espeak-ng and sox (Debian packages espeak-ng and sox). Run it from
# anywhere; it writes next to itself:
#   common/  the chime and the letters A-Z (English letter names, used by every language)
#   en/      English words: phrases, numbers 0-19, tens, hundred, thousand
#   zh/      Mandarin words, spoken by espeak-ng's cmn-latn-pinyin voice from
#            tone-numbered pinyin (Debian's Chinese dictionary lacks common characters)
# Every file is PCM 16-bit mono at 16 kHz with leading and trailing silence trimmed.
# The pack is committed; rerun this only to change it, then review the sizes.
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

rm -rf "$here/common" "$here/en" "$here/zh"
mkdir -p "$here/common"

# Chime: two falling tones (G5 then E5) with soft edges.
sox -n -r 16000 -b 16 -c 1 "$tmp/t1.wav" synth 0.30 sine 784 fade q 0.01 0.30 0.12 vol 0.5
sox -n -r 16000 -b 16 -c 1 "$tmp/t2.wav" synth 0.50 sine 659 fade q 0.01 0.50 0.30 vol 0.5
sox "$tmp/t1.wav" "$tmp/t2.wav" "$here/common/chime.wav"

for l in A B C D E F G H I J K L M N O P Q R S T U V W X Y Z; do
	seg en common "$l" "$l"
done

# English.
seg en en number "Number"
seg en en please_go_to_counter "please go to counter"
en_words=(zero one two three four five six seven eight nine ten eleven twelve thirteen
	fourteen fifteen sixteen seventeen eighteen nineteen)
for i in "${!en_words[@]}"; do
	seg en en "$i" "${en_words[$i]}"
done
en_tens=(twenty thirty forty fifty sixty seventy eighty ninety)
for i in "${!en_tens[@]}"; do
	seg en en "$(((i + 2) * 10))" "${en_tens[$i]}"
done
seg en en hundred "hundred"
seg en en thousand "thousand"

# Mandarin, tone-numbered pinyin.
zh=cmn-latn-pinyin
seg $zh zh qing "qing3"
seg $zh zh hao "hao4"
seg $zh zh dao "dao4"
seg $zh zh hao_chuangkou "hao4 chuang1 kou3"
zh_digits=(ling2 yi1 er4 san1 si4 wu3 liu4 qi1 ba1 jiu3)
for i in "${!zh_digits[@]}"; do
	seg $zh zh "$i" "${zh_digits[$i]}"
done
seg $zh zh 10 "shi2"
seg $zh zh hundred "bai3"
seg $zh zh thousand "qian1"

du -sh "$here/common" "$here/en" "$here/zh"
