package booking

// stamps tells, in bounded memory, whether something keyed by K changed
// since a moment: take a key's stamp, and it is the same later only if
// the key did not change meanwhile. A slot list read from the store is
// cached only if its key's stamp did not move during the read (gens), and
// a slot found full is marked so only if no place was given back in it
// since (releases).
//
// Keys are many and never come back (a list is of a date, a slot of a
// time): kept forever, one per list and per slot that ever changed, they
// grew by a day's lists and cancelled slots every day, tens of megabytes
// a year. So at most max keys are kept; when a change would keep one
// more, all are dropped, and a key not kept reads as the floor, which
// moves past every stamp given so far. A stamp taken before the drop
// then matches nothing after it: the reads and refusals under way when
// keys are dropped are not cached or marked (each costs one read of the
// store later), but none is taken for unchanged when it changed.
type stamps[K comparable] struct {
	max   int
	seq   uint64 // the last stamp given
	floor uint64 // the stamp of a key not kept
	at    map[K]uint64
}

// defaultStamps is how many keys the front's stamps keep: the lists of
// 2,000 resources over 14 days are 28,000 keys.
const defaultStamps = 1 << 16

func newStamps[K comparable](max int) *stamps[K] {
	return &stamps[K]{max: max, at: map[K]uint64{}}
}

// get is k's stamp.
func (s *stamps[K]) get(k K) uint64 {
	if v, ok := s.at[k]; ok {
		return v
	}
	return s.floor
}

// bump records a change of k: its stamp moves.
func (s *stamps[K]) bump(k K) {
	if _, ok := s.at[k]; !ok && len(s.at) >= s.max {
		clear(s.at)
		s.seq++
		s.floor = s.seq
	}
	s.seq++
	s.at[k] = s.seq
}
