package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap holds the console's key bindings; it is the help bar's KeyMap.
type keyMap struct {
	Up, Down                   key.Binding
	Next, CallNumber, Recall   key.Binding
	Start, Done, NoShow        key.Binding
	Transfer, Cancel, Pause    key.Binding
	Reenter, Issue, Reprint    key.Binding
	CheckIn                    key.Binding
	Filter, NextSite, PrevSite key.Binding
	Help, Quit                 key.Binding
	counterMode, multiSite     bool
}

// newKeyMap makes the bindings, their help in the words of t.
func newKeyMap(counterMode, multiSite bool, t func(string) string) keyMap {
	k := keyMap{
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", t("counter up"))),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", t("counter down"))),
		Next:       key.NewBinding(key.WithKeys("n"), key.WithHelp("n", t("next"))),
		CallNumber: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", t("call number"))),
		Recall:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", t("recall"))),
		Start:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", t("start"))),
		Done:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", t("done"))),
		NoShow:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", t("no-show"))),
		Transfer:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", t("transfer"))),
		Cancel:     key.NewBinding(key.WithKeys("X"), key.WithHelp("X", t("cancel ticket"))),
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", t("pause/resume"))),
		Reenter:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", t("re-enter no-show"))),
		Issue:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", t("issue ticket"))),
		Reprint:    key.NewBinding(key.WithKeys("P"), key.WithHelp("P", t("reprint ticket"))),
		CheckIn:    key.NewBinding(key.WithKeys("b"), key.WithHelp("b", t("check in booking"))),
		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", t("filter"))),
		NextSite:   key.NewBinding(key.WithKeys("tab", "]"), key.WithHelp("tab/]", t("next site"))),
		PrevSite:   key.NewBinding(key.WithKeys("shift+tab", "["), key.WithHelp("[", t("previous site"))),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", t("help"))),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", t("quit"))),
	}
	k.counterMode, k.multiSite = counterMode, multiSite
	if counterMode {
		k.Filter.SetEnabled(false)
		k.Up.SetEnabled(false)
		k.Down.SetEnabled(false)
		k.Issue.SetEnabled(false)
	}
	if !multiSite {
		k.NextSite.SetEnabled(false)
		k.PrevSite.SetEnabled(false)
	}
	return k
}

// ShortHelp is the one-line help bar.
func (k keyMap) ShortHelp() []key.Binding {
	if k.counterMode {
		// The keypad's own keys are on screen already.
		return []key.Binding{k.Help, k.Quit, k.CallNumber, k.Cancel, k.Reenter}
	}
	return []key.Binding{k.Help, k.Quit, k.Next, k.Recall, k.Start, k.Done, k.NoShow, k.Transfer, k.Issue, k.Filter}
}

// FullHelp is the help shown by `?`, in columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.CallNumber, k.Recall, k.Start, k.Done},
		{k.NoShow, k.Transfer, k.Cancel, k.Reenter, k.Pause},
		{k.Issue, k.CheckIn, k.Reprint, k.Filter, k.Up, k.Down, k.NextSite, k.PrevSite},
		{k.Help, k.Quit},
	}
}
