package staff

import (
	"fmt"
	"testing"

	"github.com/nowserving/nowserving/queue"
)

func sitesWith(counters map[string]int, order ...string) []queue.Site {
	var out []queue.Site
	for _, id := range order {
		st := queue.Site{ID: id}
		for i := 1; i <= counters[id]; i++ {
			st.Counters = append(st.Counters, queue.Counter{ID: fmt.Sprint(i)})
		}
		out = append(out, st)
	}
	return out
}

func TestCheckPlaces(t *testing.T) {
	t.Parallel()
	known := sitesWith(map[string]int{"hall": 3, "bank": 12, "empty": 0}, "hall", "bank", "empty")
	for _, c := range []struct {
		sites, counters []string
		want            string // "" accepted
	}{
		{nil, []string{"1", "12"}, ""},
		{[]string{"bank"}, []string{"12"}, ""},
		{[]string{"hall"}, nil, ""},
		{[]string{"hall"}, []string{"12"}, `staff: counter "12": no such counter at the account's sites (counters at hall: 1, 2, 3)`},
		{[]string{"empty"}, []string{"1"}, `staff: counter "1": no such counter at the account's sites (no counters at empty)`},
		{[]string{"hall", "bank"}, []string{"13"},
			`staff: counter "13": no such counter at the account's sites (counters at hall: 1, 2, 3; counters at bank: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)`},
		{[]string{"shop"}, []string{"1"}, `staff: site "shop": no such site (sites: hall, bank, empty)`},
	} {
		err := CheckPlaces(known, c.sites, c.counters)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("CheckPlaces(%v, %v):\n got %q\nwant %q", c.sites, c.counters, got, c.want)
		}
	}
}

func TestCheckPlacesNamesAFew(t *testing.T) {
	t.Parallel()
	known := sitesWith(map[string]int{"hall": 25}, "hall")
	err := CheckPlaces(known, nil, []string{"30"})
	want := `staff: counter "30": no such counter at the account's sites (counters at hall: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 5 more)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
