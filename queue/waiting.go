package queue

import (
	"context"
	"slices"
)

// WaitingList is the waiting tickets of a service's queue today in the
// order they would be called (by class rank, then place), at most limit
// of them (limit <= 0: all). Tickets transferred to a given counter are
// among them; their TargetCounter says so.
func (e *Engine) WaitingList(ctx context.Context, site, service string, limit int) ([]Ticket, error) {
	s, err := e.Site(site)
	if err != nil {
		return nil, err
	}
	if _, err := s.service(service); err != nil {
		return nil, err
	}
	ranks := s.Ranks
	if ranks == nil {
		ranks = DefaultRanks()
	}
	var bands []int
	for _, r := range ranks {
		if !slices.Contains(bands, r) {
			bands = append(bands, r)
		}
	}
	slices.Sort(bands)
	day := s.Day(e.clock())
	return read(ctx, e, func(ctx context.Context, tx Tx) ([]Ticket, error) {
		var out []Ticket
		for _, r := range bands {
			n := 0
			if limit > 0 {
				if n = limit - len(out); n <= 0 {
					break
				}
			}
			ts, err := tx.Waiting(ctx, WaitingQuery{Site: s.ID, Day: day, Service: service, Rank: r, Limit: n})
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
		return out, nil
	})
}
