package report

import (
	"context"
	"fmt"

	"github.com/nowserving/nowserving/queue"
)

// DayStart is the version to read site's events after so as to see every
// event of service day day (and perhaps a few of the day before, which the
// reader skips by queue.ServiceDay). It costs a few single-event reads,
// however long the log: the live dashboard rebuilds today's picture from
// it.
func DayStart(ctx context.Context, eng *queue.Engine, site, day string) (int64, error) {
	s, err := eng.Site(site)
	if err != nil {
		return 0, fmt.Errorf("report: %w", err)
	}
	if _, err := parseDay(day); err != nil {
		return 0, err
	}
	v, err := versionBefore(ctx, eng, s, day)
	if err != nil {
		return 0, fmt.Errorf("report: day start of %s: %w", day, err)
	}
	return v, nil
}
