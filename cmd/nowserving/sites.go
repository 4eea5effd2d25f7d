package main

import (
	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
)

// sites maps the validated configuration onto the engine's definitions.
func sites(cfg *config.Config) []queue.Site {
	out := make([]queue.Site, 0, len(cfg.Sites))
	for i := range cfg.Sites {
		cs := &cfg.Sites[i]
		s := queue.Site{
			ID: cs.ID, Names: cs.Name, Languages: cs.Languages, Location: cs.Location(), Rollover: cs.Rollover.Duration(),
			HeldGrace: cs.HeldGrace,
			Ranks:     map[queue.Class]int{},
		}
		for class, rank := range cs.Classes {
			s.Ranks[queue.Class(class)] = rank
		}
		for class, names := range cs.ClassNames {
			if s.ClassNames == nil {
				s.ClassNames = map[queue.Class]map[string]string{}
			}
			s.ClassNames[queue.Class(class)] = names
		}
		for _, v := range cs.Services {
			sv := queue.Service{
				Code: v.Code, Names: v.Name, Prefix: v.Prefix, Width: v.Width, DailyCap: v.DailyCap,
				AvgService: v.AvgService, WaitTarget: v.WaitTarget, MaxWait: v.MaxWait,
				RevisitAfter: v.RevisitAfter, ReentryAfter: v.ReentryAfter, MaxReentries: v.MaxReentries,
				CallTimeout: v.CallTimeout, TimeoutAction: queue.TimeoutAction(v.CallTimeoutAction),
			}
			for _, h := range v.Hours {
				sv.Hours = append(sv.Hours, queue.Hours{Days: h.Days, Open: h.Open.Duration(), Close: h.Close.Duration()})
			}
			if v.Ratio != nil {
				r := &queue.Ratio{NormalPerPriority: v.Ratio.NormalPerPriority}
				for _, c := range v.Ratio.Priority {
					r.Priority = append(r.Priority, queue.Class(c))
				}
				sv.Ratio = r
			}
			s.Services = append(s.Services, sv)
		}
		for _, c := range cs.Counters {
			qc := queue.Counter{ID: c.ID, Names: c.Name, Policy: queue.Policy(c.Policy), Zone: c.Zone}
			for _, x := range c.Services {
				qc.Services = append(qc.Services, queue.CounterService{Service: x.Service, Weight: x.Weight})
			}
			s.Counters = append(s.Counters, qc)
		}
		out = append(out, s)
	}
	return out
}
