package workflow

import (
	"strings"
	"testing"
	"time"
)

// An interval written on the clock fires where the emulator (and
// EventBridge) would: cron(0/15 * * * ? *) at :00, :15, :30, :45.
func TestIntervalOnTheClock(t *testing.T) {
	iv := "15m"
	expr, err := Trigger{On: OnSchedule, Interval: &iv}.ScheduleExpression()
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCron("0 " + strings.TrimSuffix(strings.TrimPrefix(expr, "cron("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	var fired []int
	for m := 0; m < 60; m++ {
		if c.Matches(base.Add(time.Duration(m) * time.Minute)) {
			fired = append(fired, m)
		}
	}
	if len(fired) != 4 || fired[0] != 0 || fired[1] != 15 || fired[2] != 30 || fired[3] != 45 {
		t.Errorf("%s fired at minutes %v", expr, fired)
	}
}
