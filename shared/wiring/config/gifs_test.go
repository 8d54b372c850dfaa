package config

import "testing"

// KLIPY's key from the secret (plain or {"api_key"}) or the environment,
// never both; the base only https or http to loopback.
func TestGIFConfig(t *testing.T) {
	for _, c := range []struct{ secret, want string }{{" k1 ", "k1"}, {`{"api_key":"k2"}`, "k2"}} {
		if got, err := ParseGIFSecret(c.secret); err != nil || got != c.want {
			t.Errorf("ParseGIFSecret(%q) = %q, %v", c.secret, got, err)
		}
	}
	for _, bad := range []string{"", "  ", `{"api_key":""}`, `{"api_key":`} {
		if _, err := ParseGIFSecret(bad); err == nil {
			t.Errorf("ParseGIFSecret(%q): no error", bad)
		}
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := loadGIFs(env(map[string]string{"KLIPY_SECRET_ARN": "arn:x", "KLIPY_API_KEY": "k"})); err == nil {
		t.Error("secret and key together: no error")
	}
	if _, err := loadGIFs(env(map[string]string{"KLIPY_API_KEY": "k", "KLIPY_API_BASE": "http://example.com/"})); err == nil {
		t.Error("http base off loopback: no error")
	}
	if g, err := loadGIFs(env(map[string]string{"KLIPY_API_KEY": "k", "KLIPY_API_BASE": "http://127.0.0.1:1/api/v1/"})); err != nil || g.Key != "k" {
		t.Errorf("loopback base: %+v %v", g, err)
	}
}
