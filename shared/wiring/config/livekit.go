package config

import (
	"context"
	"fmt"
	"net/url"

	"github.com/buzzrelay/relay/shared/aws/lksecret"
	"github.com/buzzrelay/relay/shared/aws/secrets"
	"github.com/buzzrelay/relay/shared/domain/livekit"
)

// LiveKitConfig is where NIP-29 LiveKit's server settings come from:
// LIVEKIT_SECRET_ARN (a Secrets Manager secret with url, api_key,
// api_secret: deployments), else LIVEKIT_URL, LIVEKIT_API_KEY and
// LIVEKIT_API_SECRET (local). None set: LiveKit is off.
type LiveKitConfig struct {
	SecretARN string
	Env       livekit.Config
}

func loadLiveKit(getenv func(string) string) (LiveKitConfig, error) {
	l := LiveKitConfig{SecretARN: getenv("LIVEKIT_SECRET_ARN"),
		Env: livekit.Config{URL: getenv("LIVEKIT_URL"), APIKey: getenv("LIVEKIT_API_KEY"), APISecret: getenv("LIVEKIT_API_SECRET")}}
	set := 0
	for _, v := range []string{l.Env.URL, l.Env.APIKey, l.Env.APISecret} {
		if v != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		return l, fmt.Errorf("LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET are set together or not at all")
	}
	if set == 3 && l.SecretARN != "" {
		return l, fmt.Errorf("LIVEKIT_SECRET_ARN and LIVEKIT_URL/_API_KEY/_API_SECRET are exclusive")
	}
	if u := l.Env.URL; u != "" {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "wss" && p.Scheme != "ws" && p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return l, fmt.Errorf("LIVEKIT_URL must be a ws(s):// or http(s):// URL, got %q", u)
		}
	}
	return l, nil
}

// On reports whether LiveKit is configured (its settings are read by the
// function that mints tokens; the others need only know it is on).
func (l LiveKitConfig) On() bool { return l.SecretARN != "" || l.Env.On() }

// LiveKit is the LiveKit server's settings, read once: the secret when
// LIVEKIT_SECRET_ARN is set, else the environment (the zero value: off).
func (c *Config) LiveKit(ctx context.Context) (livekit.Config, error) {
	if c.LiveKitConf.SecretARN == "" {
		return c.LiveKitConf.Env, nil
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartAWSTimeout)
	defer cancel()
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return livekit.Config{}, fmt.Errorf("livekit: aws config: %w", err)
	}
	return lksecret.Resolve(ctx, secrets.NewClient(awsCfg), c.LiveKitConf.SecretARN)
}
