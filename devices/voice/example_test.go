package voice_test

import (
	"fmt"
	"strings"

	"github.com/nowserving/nowserving/devices/voice"
)

func Example() {
	call := voice.Call{Number: "A023", Counter: "5"}
	for _, l := range []voice.Language{voice.English(), voice.Chinese()} {
		ph, err := l.Phrase(call)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ph.Text)
		fmt.Println(strings.Join(ph.Tokens, " "))
	}
	// Output:
	// Number A023, please go to counter 5
	// number A 0 2 3 please_go_to_counter 5
	// 请 A023 号 到 5 号窗口
	// qing A 0 2 3 hao dao 5 hao_chuangkou
}

func ExampleLanguage_Phrase() {
	en := voice.English()
	en.Number = voice.Cardinal
	ph, _ := en.Phrase(voice.Call{Number: "A023", Counter: "12"})
	fmt.Println(ph.Speech)
	zh := voice.Chinese()
	zh.Number = voice.Cardinal
	ph, _ = zh.Phrase(voice.Call{Number: "A023", Counter: "12"})
	fmt.Println(ph.Speech)
	// Output:
	// Number A twenty three please go to counter twelve
	// qing3 A er4 shi2 san1 hao4 dao4 shi2 er4 hao4 chuang1 kou3
}
