package led

import (
	"fmt"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// encodeText converts s to the board's character set: "ascii" (default)
// accepts only 7-bit text, "gbk" is GBK (CP936) as used by Chinese boards.
func encodeText(charset, s string) ([]byte, error) {
	switch charset {
	case "", "ascii":
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return nil, fmt.Errorf("led: encode %q as ascii: %w", s, ErrCharset)
			}
		}
		return []byte(s), nil
	case "gbk":
		b, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("led: encode %q as gbk: %w", s, ErrCharset)
		}
		return b, nil
	default:
		return nil, fmt.Errorf("led: charset %q: %w", charset, ErrCharset)
	}
}
