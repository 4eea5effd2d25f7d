package metrics

import "github.com/prometheus/client_golang/prometheus"

// Retention counts what this daemon's purge removed (see
// config.Retention):
//
//	nowserving_retention_deleted_rows_total{table}   rows deleted past their window
//	nowserving_retention_blanked_rows_total{table}   rows whose personal data was blanked
type Retention struct {
	deleted, blanked *prometheus.CounterVec
}

// RetentionTables are the tables the purge reports on, so their series
// exist at 0 from the start.
var RetentionTables = []string{"requests", "outbox", "patient_locks", "bookings", "slots", "events", "tickets"}

// NewRetention registers the retention metrics on reg.
func NewRetention(reg prometheus.Registerer) (*Retention, error) {
	const sub subsystem = "retention"
	r := &Retention{
		deleted: sub.counterVec("deleted_rows_total", "Rows the purge deleted past their retention window, by table.", "table"),
		blanked: sub.counterVec("blanked_rows_total", "Rows whose personal data the purge blanked past retention.personal, by table.", "table"),
	}
	if err := registerAll(reg, "retention metrics", r.deleted, r.blanked); err != nil {
		return nil, err
	}
	for _, t := range RetentionTables {
		r.deleted.WithLabelValues(t)
	}
	r.blanked.WithLabelValues("bookings")
	return r, nil
}

// Deleted counts n rows deleted from table.
func (r *Retention) Deleted(table string, n int) { r.deleted.WithLabelValues(table).Add(float64(n)) }

// Blanked counts n rows of table whose personal data was blanked.
func (r *Retention) Blanked(table string, n int) { r.blanked.WithLabelValues(table).Add(float64(n)) }
