package staff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// maxNamed bounds the ids a refusal lists, so that a hall of two hundred
// counters still gets a readable line.
const maxNamed = 20

// CheckPlaces refuses the sites and counters of an account that the
// configuration's sites (known) do not have: each site must exist, each
// counter at one of the account's sites (at any site when it has none).
// The refusal names what there is, so the person can correct it. Both
// `nowserving user add` and the admin page check with it.
func CheckPlaces(known []queue.Site, sites, counters []string) error {
	ids := make([]string, 0, len(known))
	for _, st := range known {
		ids = append(ids, st.ID)
	}
	for _, id := range sites {
		if !slices.Contains(ids, id) {
			return fmt.Errorf("staff: site %.40q: no such site (sites: %s)", id, named(ids))
		}
	}
	var at []queue.Site
	for _, st := range known {
		if len(sites) == 0 || slices.Contains(sites, st.ID) {
			at = append(at, st)
		}
	}
	for _, c := range counters {
		if !slices.ContainsFunc(at, func(st queue.Site) bool { return st.HasCounter(c) }) {
			return fmt.Errorf("staff: counter %.40q: no such counter at the account's sites (%s)", c, counterList(at))
		}
	}
	return nil
}

// counterList tells the counters of sites: "counters at hospital: 1, 2, 3",
// one clause per site.
func counterList(sites []queue.Site) string {
	if len(sites) == 0 {
		return "no sites"
	}
	parts := make([]string, 0, len(sites))
	for _, st := range sites {
		ids := make([]string, 0, len(st.Counters))
		for _, k := range st.Counters {
			ids = append(ids, k.ID)
		}
		if len(ids) == 0 {
			parts = append(parts, "no counters at "+st.ID)
			continue
		}
		parts = append(parts, "counters at "+st.ID+": "+named(ids))
	}
	return strings.Join(parts, "; ")
}

// named joins ids with commas, at most maxNamed of them.
func named(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	if len(ids) <= maxNamed {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxNamed], ", "), len(ids)-maxNamed)
}
