package config

import (
	"context"
	"fmt"

	"github.com/buzzrelay/relay/shared/signer"
)

// Signer builds the relay key named by RELAY_SIGNER:
//
//	local (default): RELAY_SECRET_KEY (hex), else the file RELAY_KEY_FILE
//	                 (default .localdev/relay.key), created on first use.
func (c *Config) Signer(ctx context.Context) (signer.Signer, error) {
	switch mode := c.getenv("RELAY_SIGNER"); mode {
	case "", "local":
		if sk := c.getenv("RELAY_SECRET_KEY"); sk != "" {
			k, err := signer.FromHex(sk)
			if err != nil {
				return nil, fmt.Errorf("RELAY_SECRET_KEY: %w", err)
			}
			return k, nil
		}
		path := c.getenv("RELAY_KEY_FILE")
		if path == "" {
			path = ".localdev/relay.key"
		}
		return signer.LoadOrCreateFile(path)
	default:
		return nil, fmt.Errorf("RELAY_SIGNER must be local, got %q", mode)
	}
}
