package config

import (
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// The RATE_* variables are read once, here, over ratelimit.Defaults.
func TestRateLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want func(*ratelimit.Limits)
		err  string
	}{
		{"defaults", nil, func(*ratelimit.Limits) {}, ""},
		{"one set", map[string]string{"RATE_EVENTS_PER_MIN": "4"}, func(l *ratelimit.Limits) { l.EventsPerMinute = 4 }, ""},
		{"zero turns one off", map[string]string{"RATE_READS_PER_MIN": "0"}, func(l *ratelimit.Limits) { l.ReadsPerMinute = 0 }, ""},
		{"allow list", map[string]string{"RATE_ALLOW": " AB , cd,"}, func(l *ratelimit.Limits) { l.Allow = map[string]bool{"ab": true, "cd": true} }, ""},
		{"negative", map[string]string{"RATE_CHANNELS_PER_HOUR": "-1"}, nil, "RATE_CHANNELS_PER_HOUR must be a whole number"},
		{"not a number", map[string]string{"RATE_WS_MESSAGES_PER_MIN": "lots"}, nil, "RATE_WS_MESSAGES_PER_MIN must be a whole number"},
	} {
		cfg, err := Load(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := ratelimit.Defaults
		want.Allow = map[string]bool{}
		c.want(&want)
		got := cfg.Limits
		if got.EventsPerMinute != want.EventsPerMinute || got.EventBytesPerMinute != want.EventBytesPerMinute ||
			got.ChannelsPerHour != want.ChannelsPerHour || got.ReadsPerMinute != want.ReadsPerMinute ||
			got.MessagesPerMinute != want.MessagesPerMinute || len(got.Allow) != len(want.Allow) {
			t.Errorf("%s: limits %+v, want %+v", c.name, got, want)
		}
		for pk := range want.Allow {
			if !got.Allow[pk] {
				t.Errorf("%s: %s not allowed", c.name, pk)
			}
		}
	}
	off, err := Load(func(k string) string { return RateLimitsOff()[k] })
	if err != nil {
		t.Fatal(err)
	}
	if l := off.Limits; l.EventsPerMinute != 0 || l.EventBytesPerMinute != 0 || l.ChannelsPerHour != 0 || l.ReadsPerMinute != 0 || l.MessagesPerMinute != 0 {
		t.Errorf("RateLimitsOff leaves limits on: %+v", l)
	}
}
