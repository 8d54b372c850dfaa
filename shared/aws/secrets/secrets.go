// Package secrets reads a Secrets Manager secret's string, once at cold
// start: the one fetch behind the database's secret (dbsecret) and
// LiveKit's (lksecret), which each parse their own JSON.
package secrets

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// GetAPI is the Secrets Manager operation used at cold start.
type GetAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// NewClient returns a Secrets Manager client for cfg.
func NewClient(cfg aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(cfg) }

// Fetch returns the string value of secret arn, then parsed by parse;
// what names the secret in its errors ("database secret").
func Fetch[T any](ctx context.Context, client GetAPI, what, arn string, parse func(string) (T, error)) (T, error) {
	var zero T
	if arn == "" {
		return zero, errors.New(what + ": empty ARN")
	}
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, arn, err)
	}
	if out.SecretString == nil {
		return zero, fmt.Errorf("%s %s has no string value", what, arn)
	}
	v, err := parse(*out.SecretString)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, arn, err)
	}
	return v, nil
}
