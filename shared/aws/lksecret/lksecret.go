// Package lksecret reads the relay's LiveKit server settings (URL, API key
// and API secret) from a Secrets Manager secret, once at cold start.
package lksecret

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/buzzrelay/relay/shared/domain/livekit"
)

// GetAPI is the Secrets Manager operation used at cold start.
type GetAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// NewClient returns a Secrets Manager client for cfg.
func NewClient(cfg aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(cfg) }

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
func Resolve(ctx context.Context, client GetAPI, arn string) (livekit.Config, error) {
	if arn == "" {
		return livekit.Config{}, errors.New("livekit secret: empty ARN")
	}
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return livekit.Config{}, fmt.Errorf("livekit secret %s: %w", arn, err)
	}
	if out.SecretString == nil {
		return livekit.Config{}, fmt.Errorf("livekit secret %s has no string value", arn)
	}
	cfg, err := Parse(*out.SecretString)
	if err != nil {
		return livekit.Config{}, fmt.Errorf("livekit secret %s: %w", arn, err)
	}
	return cfg, nil
}
