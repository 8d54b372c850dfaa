package lksecret

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

type fakeSM struct {
	value *string
	err   error
}

func (f fakeSM) GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	return &secretsmanager.GetSecretValueOutput{SecretString: f.value}, f.err
}

func TestResolveLiveKitSecret(t *testing.T) {
	ctx := context.Background()
	cfg, err := Resolve(ctx, fakeSM{value: aws.String(`{"url":"wss://lk","api_key":"k","api_secret":"s"}`)}, "arn:x")
	if err != nil || cfg.URL != "wss://lk" || cfg.APIKey != "k" || cfg.APISecret != "s" || !cfg.On() {
		t.Fatalf("%+v %v", cfg, err)
	}
	for _, c := range []struct {
		name string
		sm   fakeSM
		arn  string
		want string
	}{
		{"no arn", fakeSM{}, "", "empty ARN"},
		{"fetch fails", fakeSM{err: errors.New("denied")}, "arn:x", "denied"},
		{"no string", fakeSM{}, "arn:x", "no string value"},
		{"not json", fakeSM{value: aws.String("nope")}, "arn:x", "not JSON"},
		{"missing secret", fakeSM{value: aws.String(`{"url":"wss://lk","api_key":"k"}`)}, "arn:x", "lacks api_secret"},
	} {
		if _, err := Resolve(ctx, c.sm, c.arn); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
