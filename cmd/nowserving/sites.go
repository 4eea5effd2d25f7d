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
		s.Resources, s.Appointments = resources(cs)
		out = append(out, s)
	}
	return out
}

// resources maps a site's bookable resources and booking rules.
func resources(cs *config.Site) ([]queue.Resource, queue.Appointments) {
	var out []queue.Resource
	for _, r := range cs.Resources {
		sc := r.Schedule
		out = append(out, queue.Resource{ID: r.ID, Names: r.Name, Service: r.Service, Schedule: queue.Schedule{
			Days: sc.Days, Open: sc.Open.Duration(), Close: sc.Close.Duration(), Slot: sc.Slot, Capacity: sc.Capacity,
			DaysAhead: sc.DaysAhead, OpensAt: sc.OpensAt.Duration()}})
	}
	a := cs.Appointments
	return out, queue.Appointments{Early: a.CheckInEarly, Late: a.CheckInLate, LatePolicy: queue.LatePolicy(a.Late),
		MissedGrace: a.MissedGrace, HoldFor: a.HoldFor, PatientRate: a.PatientRate, PatientWindow: a.PatientWindow,
		RequireKey: a.RequireIdempotencyKey}
}
