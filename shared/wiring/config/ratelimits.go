package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// rateSettings maps each rate limit's environment variable to its field
// in l.
func rateSettings(l *ratelimit.Limits) map[string]*int64 {
	return map[string]*int64{
		"RATE_EVENTS_PER_MIN":       &l.EventsPerMinute,
		"RATE_EVENT_BYTES_PER_MIN":  &l.EventBytesPerMinute,
		"RATE_CHANNELS_PER_HOUR":    &l.ChannelsPerHour,
		"RATE_READS_PER_MIN":        &l.ReadsPerMinute,
		"RATE_WS_MESSAGES_PER_MIN":  &l.MessagesPerMinute,
		"RATE_GIF_SEARCHES_PER_MIN": &l.GIFSearchesPerMinute,
	}
}

// RateLimitsOff is the environment that turns every rate limit off, for
// benchmarks whose measure is throughput.
func RateLimitsOff() map[string]string {
	var l ratelimit.Limits
	env := map[string]string{}
	for name := range rateSettings(&l) {
		env[name] = "0"
	}
	return env
}

// rateLimits reads RATE_EVENTS_PER_MIN, RATE_EVENT_BYTES_PER_MIN,
// RATE_CHANNELS_PER_HOUR, RATE_READS_PER_MIN, RATE_WS_MESSAGES_PER_MIN
// (whole numbers, 0 = no limit) and RATE_ALLOW (comma-separated hex
// pubkeys) over ratelimit.Defaults.
func rateLimits(getenv func(string) string) (ratelimit.Limits, error) {
	l := ratelimit.Defaults
	for name, p := range rateSettings(&l) {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return ratelimit.Limits{}, fmt.Errorf("%s must be a whole number (0 = no limit), got %q", name, v)
			}
			*p = n
		}
	}
	l.Allow = map[string]bool{}
	for _, pk := range strings.Split(getenv("RATE_ALLOW"), ",") {
		if pk = strings.ToLower(strings.TrimSpace(pk)); pk != "" {
			l.Allow[pk] = true
		}
	}
	return l, nil
}
