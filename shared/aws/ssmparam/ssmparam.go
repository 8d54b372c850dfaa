// Package ssmparam reads and writes the SSM parameter that holds the relay
// key's KMS ciphertext (base64). The value is already encrypted by KMS, so a
// String parameter is enough; SecureString parameters are read as well.
package ssmparam

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// GetAPI is the SSM operation used at cold start.
type GetAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// PutAPI is the SSM operation used by the key-creation command.
type PutAPI interface {
	PutParameter(ctx context.Context, in *ssm.PutParameterInput, opts ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
}

// NewClient returns an SSM client for cfg (AWS_ENDPOINT_URL_SSM is honoured
// when cfg comes from awssdk.Load).
func NewClient(cfg aws.Config) *ssm.Client { return ssm.NewFromConfig(cfg) }

// Get returns the value of parameter name.
func Get(ctx context.Context, client GetAPI, name string) (string, error) {
	if name == "" {
		return "", errors.New("ssm parameter: empty name")
	}
	out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("ssm parameter %s: %w", name, err)
	}
	if out.Parameter == nil || out.Parameter.Value == nil || strings.TrimSpace(*out.Parameter.Value) == "" {
		return "", fmt.Errorf("ssm parameter %s: empty value", name)
	}
	return *out.Parameter.Value, nil
}

// Put writes value to parameter name as a String parameter. overwrite must be
// true to replace an existing value (a key rotation); otherwise an existing
// parameter is an error, so a relay identity is never replaced by accident.
func Put(ctx context.Context, client PutAPI, name, value, description string, overwrite bool) (version int64, err error) {
	if name == "" {
		return 0, errors.New("ssm parameter: empty name")
	}
	in := &ssm.PutParameterInput{
		Name:      aws.String(name),
		Value:     aws.String(value),
		Type:      types.ParameterTypeString,
		Overwrite: aws.Bool(overwrite),
		Tier:      types.ParameterTierStandard,
	}
	if description != "" {
		in.Description = aws.String(description)
	}
	out, err := client.PutParameter(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("put ssm parameter %s: %w", name, err)
	}
	return out.Version, nil
}
