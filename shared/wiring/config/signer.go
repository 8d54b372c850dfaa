package config

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/aws/ssmparam"
	"github.com/buzzrelay/relay/shared/domain/signer"
	"github.com/buzzrelay/relay/shared/service/community"
)

// coldStartAWSTimeout bounds the AWS calls made while building the signer or
// the DSN, so a missing route to KMS / SSM / Secrets Manager fails the cold
// start with a clear error instead of hanging until the Lambda timeout.
const coldStartAWSTimeout = 15 * time.Second

// kmsOnlyVars configure the KMS signer; seeing one without RELAY_SIGNER=kms
// means the operator meant KMS, and falling back to a local key would sign
// with the wrong identity.
var kmsOnlyVars = [...]string{"RELAY_KEY_CIPHERTEXT", "RELAY_KEY_SSM_PARAMETER", "RELAY_KMS_KEY_ID"}

// Signer builds the relay key named by RELAY_SIGNER:
//
//	local (default): RELAY_SECRET_KEY (hex), else the file RELAY_KEY_FILE
//	                 (default .localdev/relay.key), created on first use.
//	                 Inside Lambda only RELAY_SECRET_KEY is accepted: a key
//	                 file created on a cold start would be a random identity.
//	kms:             the KMS ciphertext of the 32-byte secret, base64, from
//	                 RELAY_KEY_CIPHERTEXT or from the SSM parameter named by
//	                 RELAY_KEY_SSM_PARAMETER (exactly one of the two),
//	                 decrypted with the encryption context
//	                 {"community": BUZZ_COMMUNITY or "default"}.
//	                 RELAY_KMS_KEY_ID (optional) makes KMS check that the
//	                 ciphertext belongs to that key. AWS_ENDPOINT_URL_KMS and
//	                 AWS_ENDPOINT_URL_SSM point the SDK at local emulators.
//
// Every misconfiguration is an error here, at start.
func (c *Config) Signer(ctx context.Context) (signer.Signer, error) {
	switch mode := c.Key.Signer; mode {
	case "", "local":
		for _, v := range kmsOnlyVars {
			if *c.text()[v] != "" {
				return nil, fmt.Errorf("%s is set but RELAY_SIGNER is %q: set RELAY_SIGNER=kms to use the KMS relay key", v, mode)
			}
		}
		if sk := c.Key.SecretKey; sk != "" {
			k, err := signer.FromHex(sk)
			if err != nil {
				return nil, fmt.Errorf("RELAY_SECRET_KEY: %w", err)
			}
			return k, nil
		}
		if c.InLambda {
			return nil, errors.New("RELAY_SIGNER=local inside Lambda needs RELAY_SECRET_KEY; a deployed relay should use RELAY_SIGNER=kms")
		}
		return signer.LoadOrCreateFile(c.keyFile())
	case "kms":
		return c.kmsSigner(ctx)
	default:
		return nil, fmt.Errorf("RELAY_SIGNER must be local or kms, got %q", mode)
	}
}

func (c *Config) kmsSigner(ctx context.Context) (signer.Signer, error) {
	if c.Key.SecretKey != "" || c.Key.KeyFile != "" {
		return nil, errors.New("RELAY_SIGNER=kms: RELAY_SECRET_KEY / RELAY_KEY_FILE must not be set (they configure the local signer)")
	}
	inline, param := c.Key.Ciphertext, c.Key.SSMParameter
	switch {
	case inline == "" && param == "":
		return nil, errors.New("RELAY_SIGNER=kms needs RELAY_KEY_CIPHERTEXT (base64) or RELAY_KEY_SSM_PARAMETER (parameter name); create one with `go run ./localdev/relaykey`")
	case inline != "" && param != "":
		return nil, errors.New("RELAY_SIGNER=kms: set only one of RELAY_KEY_CIPHERTEXT and RELAY_KEY_SSM_PARAMETER")
	}
	ctx, cancel := context.WithTimeout(ctx, coldStartAWSTimeout)
	defer cancel()
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	source := "RELAY_KEY_CIPHERTEXT"
	if param != "" {
		source = "SSM parameter " + param
		inline, err = ssmparam.Get(ctx, ssmparam.NewClient(awsCfg), param)
		if err != nil {
			return nil, fmt.Errorf("RELAY_SIGNER=kms: %w", err)
		}
	}
	ct, err := kmssigner.DecodeCiphertext(inline)
	if err != nil {
		return nil, fmt.Errorf("RELAY_SIGNER=kms: %s: %w", source, err)
	}
	k, err := kmssigner.Load(ctx, kmssigner.NewClient(awsCfg), ct, c.Key.KMSKeyID, c.DefaultCommunity)
	if err != nil {
		return nil, fmt.Errorf("RELAY_SIGNER=kms: %s: %w", source, err)
	}
	return k, nil
}

// awsConfig is the SDK configuration of the KMS, SSM, Secrets Manager and
// RDS IAM clients (shared/aws/awssdk).
func (c *Config) awsConfig(ctx context.Context) (aws.Config, error) {
	return awssdk.Load(ctx, c.AWSRegion, "")
}

// KMS returns a KMS client configured the standard way (AWS_ENDPOINT_URL_KMS
// points it at local-kms); loading it makes no network call.
func (c *Config) KMS(ctx context.Context) (*kms.Client, error) {
	awsCfg, err := c.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return kmssigner.NewClient(awsCfg), nil
}

// Sealer builds what seals and opens the relay keys of communities stored
// in the database (shared/service/community): with RELAY_SIGNER=kms the KMS key
// RELAY_KMS_KEY_ID (encryption context {"community": id}; loading it makes
// no network call); locally an AES-GCM key, RELAY_SEAL_KEY (hex) or the
// file RELAY_SEAL_KEY_FILE (default seal.key next to the relay key file),
// created on first use. Inside Lambda without KMS it answers nil: only the
// configured relay key signs.
func (c *Config) Sealer(ctx context.Context) (community.Sealer, error) {
	if c.Key.Signer == "kms" {
		client, err := c.KMS(ctx)
		if err != nil {
			return nil, fmt.Errorf("community keys: %w", err)
		}
		return community.KMSSealer{Client: client, KeyID: c.Key.KMSKeyID}, nil
	}
	if h := c.Key.SealKey; h != "" {
		s, err := community.LocalSealerFromHex(h)
		if err != nil {
			return nil, fmt.Errorf("RELAY_SEAL_KEY: %w", err)
		}
		return s, nil
	}
	if c.InLambda {
		return nil, nil
	}
	path := c.Key.SealKeyFile
	if path == "" {
		path = filepath.Join(filepath.Dir(c.keyFile()), "seal.key")
	}
	return community.LoadOrCreateLocalSealer(path)
}

// keyFile is RELAY_KEY_FILE, default .localdev/relay.key.
func (c *Config) keyFile() string {
	if c.Key.KeyFile != "" {
		return c.Key.KeyFile
	}
	return ".localdev/relay.key"
}
