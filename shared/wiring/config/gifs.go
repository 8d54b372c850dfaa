package config

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/buzzrelay/relay/shared/aws/secrets"
	"github.com/buzzrelay/relay/shared/service/gifs"
)

// GIFConfig is where Buzz's GIF proxy gets its KLIPY key: KLIPY_SECRET_ARN
// (a Secrets Manager secret holding the key, or {"api_key": ...}:
// deployments), else KLIPY_API_KEY (local). KLIPY_API_BASE replaces the
// provider's API root (https, or http to loopback: a test's fake
// provider). No key: the proxy is off (its routes 404, NIP-11 does not
// advertise it).
type GIFConfig struct {
	SecretARN, Key, Base string
}

func loadGIFs(getenv func(string) string) (GIFConfig, error) {
	g := GIFConfig{SecretARN: getenv("KLIPY_SECRET_ARN"), Key: getenv("KLIPY_API_KEY"), Base: getenv("KLIPY_API_BASE")}
	if g.SecretARN != "" && g.Key != "" {
		return g, fmt.Errorf("KLIPY_SECRET_ARN and KLIPY_API_KEY are exclusive")
	}
	if g.Base != "" {
		if _, err := gifs.ParseBase(g.Base); err != nil {
			return g, fmt.Errorf("KLIPY_API_BASE: %w", err)
		}
	}
	return g, nil
}

// GIFKey is the provider key, read once: the secret when KLIPY_SECRET_ARN
// is set, else KLIPY_API_KEY ("": off).
func (c *Config) GIFKey(ctx context.Context) (string, error) {
	if c.GIFConf.SecretARN == "" {
		return c.GIFConf.Key, nil
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartAWSTimeout)
	defer cancel()
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return "", fmt.Errorf("klipy: aws config: %w", err)
	}
	return secrets.Fetch(ctx, secrets.NewClient(awsCfg), "klipy secret", c.GIFConf.SecretARN, ParseGIFSecret)
}

// ParseGIFSecret reads the KLIPY secret: the key itself, or JSON
// {"api_key": key}.
func ParseGIFSecret(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var v struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return "", fmt.Errorf("klipy secret is neither a key nor JSON with api_key: %w", err)
		}
		s = strings.TrimSpace(v.APIKey)
	}
	if s == "" {
		return "", fmt.Errorf("klipy secret holds no key")
	}
	return s, nil
}
