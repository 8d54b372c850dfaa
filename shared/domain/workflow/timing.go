package workflow

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Timing defaults, as Buzz's executor has them.
const (
	// DefaultStepTimeout is a step's timeout when it sets none
	// (default_timeout_secs).
	DefaultStepTimeout = 300 * time.Second
	// DefaultApprovalTimeout is a request_approval's when it sets none.
	DefaultApprovalTimeout = "24h"
	// MaxDelaySeconds is the longest delay step Buzz runs (it sleeps
	// within the step's timeout). Here a delay is a row and a scheduled
	// wake, so the bound is kept only for Buzz's answer.
	MaxDelaySeconds = 270
)

// DurationSeconds reads "5m", "1h", "30s" or a plain number of seconds
// (Buzz's parse_duration_secs).
func DurationSeconds(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	mul := uint64(1)
	num := s
	switch {
	case strings.HasSuffix(s, "h"):
		mul, num = 3600, strings.TrimSuffix(s, "h")
	case strings.HasSuffix(s, "m"):
		mul, num = 60, strings.TrimSuffix(s, "m")
	case strings.HasSuffix(s, "s"):
		num = strings.TrimSuffix(s, "s")
	}
	n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
	if err != nil || strings.HasPrefix(strings.TrimSpace(num), "+") {
		return 0, defErr("invalid duration: %s", s)
	}
	if mul > 1 && n > math.MaxUint64/mul {
		return 0, defErr("duration overflow: %s", s)
	}
	return n * mul, nil
}

// Cron is a parsed cron expression in Buzz's 7-field form (sec min hour
// day-of-month month day-of-week year; 5 fields get "0 … *", 6 get
// "… *"). Day of week runs 1 (Sunday) to 7, as Buzz's cron crate and
// EventBridge both number it.
type Cron struct {
	fields [7]cronField
	raw    [7]string
}

type cronField struct {
	any  bool
	set  map[int]bool
	none bool // "?"
}

var cronRanges = [7]struct{ lo, hi int }{{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {1, 7}, {1970, 2100}}

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
var dayNames = map[string]int{"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

// NormalizeCron is Buzz's normalize_cron.
func NormalizeCron(expr string) string {
	switch len(strings.Fields(expr)) {
	case 5:
		return "0 " + expr + " *"
	case 6:
		return expr + " *"
	}
	return expr
}

// ParseCron parses expr (5, 6 or 7 fields).
func ParseCron(expr string) (*Cron, error) {
	f := strings.Fields(NormalizeCron(expr))
	if len(f) != 7 {
		return nil, fmt.Errorf("expected 5, 6 or 7 fields, got %d", len(strings.Fields(expr)))
	}
	c := &Cron{}
	for i, s := range f {
		fld, err := parseCronField(s, i)
		if err != nil {
			return nil, err
		}
		c.fields[i], c.raw[i] = fld, s
	}
	return c, nil
}

var fieldNames = [7]string{"seconds", "minutes", "hours", "days of month", "months", "days of week", "years"}

func parseCronField(s string, i int) (cronField, error) {
	r := cronRanges[i]
	if s == "*" {
		return cronField{any: true}, nil
	}
	if s == "?" && (i == 3 || i == 5) {
		return cronField{any: true, none: true}, nil
	}
	f := cronField{set: map[int]bool{}}
	for _, part := range strings.Split(s, ",") {
		step := 1
		if base, st, ok := strings.Cut(part, "/"); ok {
			n, err := strconv.Atoi(st)
			if err != nil || n <= 0 {
				return f, fmt.Errorf("invalid step %q in %s", st, fieldNames[i])
			}
			part, step = base, n
		}
		lo, hi := r.lo, r.hi
		switch {
		case part == "*":
		case strings.Contains(part, "-"):
			a, b, _ := strings.Cut(part, "-")
			var err error
			if lo, err = cronValue(a, i); err != nil {
				return f, err
			}
			if hi, err = cronValue(b, i); err != nil {
				return f, err
			}
			if lo > hi {
				return f, fmt.Errorf("range %s is backwards in %s", part, fieldNames[i])
			}
		default:
			v, err := cronValue(part, i)
			if err != nil {
				return f, err
			}
			lo = v
			if !strings.Contains(s, "/") {
				hi = v
			}
		}
		for v := lo; v <= hi; v += step {
			f.set[v] = true
		}
	}
	return f, nil
}

func cronValue(s string, i int) (int, error) {
	u := strings.ToUpper(s)
	if i == 4 {
		if v, ok := monthNames[u]; ok {
			return v, nil
		}
	}
	if i == 5 {
		if v, ok := dayNames[u]; ok {
			return v, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("invalid value %q in %s", s, fieldNames[i])
	}
	if v < cronRanges[i].lo || v > cronRanges[i].hi {
		return 0, fmt.Errorf("%d is out of range %d-%d for %s", v, cronRanges[i].lo, cronRanges[i].hi, fieldNames[i])
	}
	return v, nil
}

func (f cronField) has(v int) bool { return f.any || f.set[v] }

// Matches reports whether t (UTC, to the minute) is one of the times.
func (c *Cron) Matches(t time.Time) bool {
	t = t.UTC()
	return c.fields[1].has(t.Minute()) && c.fields[2].has(t.Hour()) && c.fields[3].has(t.Day()) &&
		c.fields[4].has(int(t.Month())) && c.fields[5].has(int(t.Weekday())+1) && c.fields[6].has(t.Year())
}

// Next is the first whole minute after t that matches (within 5 years).
func (c *Cron) Next(t time.Time) (time.Time, bool) {
	m := t.UTC().Truncate(time.Minute).Add(time.Minute)
	for end := m.AddDate(5, 0, 0); m.Before(end); m = m.Add(time.Minute) {
		if !c.fields[6].has(m.Year()) || !c.fields[4].has(int(m.Month())) {
			m = time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0).Add(-time.Minute)
			continue
		}
		if c.Matches(m) {
			return m, true
		}
	}
	return time.Time{}, false
}

// ScheduleExpression is the EventBridge Scheduler expression of a
// schedule trigger: for an interval, cron(0/N …) on the clock when N
// minutes divide an hour (or N hours a day), else rate(N minutes); cron(min hour dom
// month dow year) for a cron, one of its day fields "?" as EventBridge
// requires (Buzz's seconds field dropped: its loop ticks each minute).
func (t Trigger) ScheduleExpression() (string, error) {
	if t.On != OnSchedule {
		return "", errors.New("workflow: not a schedule trigger")
	}
	if t.Interval != nil {
		secs, err := DurationSeconds(*t.Interval)
		if err != nil {
			return "", err
		}
		mins := (secs + 59) / 60
		// On the clock when the interval divides an hour or a day: every
		// schedule of one interval then fires in the same minute, and the
		// fires share one database wake (docs/workflows.md, the cost
		// tool's designs) instead of keeping a pausing Aurora awake.
		switch {
		case mins > 1 && 60%mins == 0:
			return fmt.Sprintf("cron(0/%d * * * ? *)", mins), nil
		case mins >= 60 && mins%60 == 0 && 24%(mins/60) == 0:
			return fmt.Sprintf("cron(0 0/%d * * ? *)", mins/60), nil
		}
		unit := "minutes"
		if mins == 1 {
			unit = "minute"
		}
		return fmt.Sprintf("rate(%d %s)", mins, unit), nil
	}
	if t.Cron == nil {
		return "", errors.New("workflow: schedule without cron or interval")
	}
	c, err := ParseCron(*t.Cron)
	if err != nil {
		return "", err
	}
	dom, dow := c.raw[3], c.raw[5]
	switch {
	case dow == "*" || dow == "?":
		dow = "?"
	case dom == "*" || dom == "?":
		dom = "?"
	default:
		return "", errors.New("workflow: EventBridge cannot take both a day of month and a day of week")
	}
	return fmt.Sprintf("cron(%s %s %s %s %s %s)", c.raw[1], c.raw[2], dom, c.raw[4], dow, c.raw[6]), nil
}
