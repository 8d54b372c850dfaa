// Package lksecret reads the relay's LiveKit server settings (URL, API key
// and API secret) from a Secrets Manager secret, once at cold start.
package lksecret

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/secrets"

	"github.com/buzzrelay/relay/shared/domain/livekit"
)

// secret is the secret's JSON: {"url", "api_key", "api_secret"}.
type secret struct {
	URL       string `json:"url"`
	APIKey    string `json:"api_key"`
	APISecret string `json:"api_secret"`
}

// Parse reads the secret's JSON; every field is required.
func Parse(secretJSON string) (livekit.Config, error) {
	var s secret
	if err := json.Unmarshal([]byte(secretJSON), &s); err != nil {
		return livekit.Config{}, fmt.Errorf("livekit secret is not JSON with url, api_key, api_secret: %w", err)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"url", s.URL}, {"api_key", s.APIKey}, {"api_secret", s.APISecret}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return livekit.Config{}, fmt.Errorf("livekit secret lacks %s", strings.Join(missing, ", "))
	}
	return livekit.Config{URL: s.URL, APIKey: s.APIKey, APISecret: s.APISecret}, nil
}

// Resolve fetches secret arn and parses it.
func Resolve(ctx context.Context, client secrets.GetAPI, arn string) (livekit.Config, error) {
	return secrets.Fetch(ctx, client, "livekit secret", arn, Parse)
}
