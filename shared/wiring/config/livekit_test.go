package config

import (
	"strings"
	"testing"
)

// TestLoadLiveKit: LiveKit is off with nothing set, on with the three
// variables or the secret's ARN, and half a configuration is an error at
// cold start, never a silently-off feature.
func TestLoadLiveKit(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		on   bool
		arn  string
		err  string
	}{
		{name: "off", env: map[string]string{}},
		{name: "env", env: map[string]string{"LIVEKIT_URL": "wss://lk.example", "LIVEKIT_API_KEY": "k", "LIVEKIT_API_SECRET": "s"}, on: true},
		{name: "secret", env: map[string]string{"LIVEKIT_SECRET_ARN": "arn:aws:secretsmanager:x"}, arn: "arn:aws:secretsmanager:x"},
		{name: "half", env: map[string]string{"LIVEKIT_URL": "wss://lk.example"}, err: "together"},
		{name: "both", env: map[string]string{"LIVEKIT_SECRET_ARN": "a", "LIVEKIT_URL": "wss://lk", "LIVEKIT_API_KEY": "k", "LIVEKIT_API_SECRET": "s"}, err: "exclusive"},
		{name: "bad url", env: map[string]string{"LIVEKIT_URL": "lk.example", "LIVEKIT_API_KEY": "k", "LIVEKIT_API_SECRET": "s"}, err: "URL"},
	} {
		l, err := loadLiveKit(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || l.Env.On() != c.on || l.SecretARN != c.arn {
			t.Errorf("%s: %+v %v", c.name, l, err)
		}
	}
}
