package lambdas

import (
	"fmt"
	"testing"
)

// Environment asks only for the references a function uses: migrate is
// built before the custom resource exists, so it never asks for the relay
// key's ciphertext; a function without a database gets no database
// settings; the per-service endpoints come with egress=ipv6 only.
func TestEnvironment(t *testing.T) {
	s := Settings{Community: "c", LogLevel: "info", DBAuth: "iam", Egress: "ipv6", RelayKeyRevision: "1", Media: true,
		MediaLimits: MediaLimits{MaxBytes: 1, DirectMaxBytes: 1, PresignTTL: "15m"}}
	for _, c := range []struct {
		fn       string
		egress   string
		has, not []string
		noRefs   []Ref
	}{
		{"migrate", "ipv6", []string{"DB_SECRET_ARN", "DB_IAM_USER", "RELAY_KMS_KEY_ID", "AWS_ENDPOINT_URL_KMS"},
			[]string{"RELAY_KEY_CIPHERTEXT", "DB_AUTH", "WS_MANAGEMENT_ENDPOINT", "MEDIA_BUCKET"}, []Ref{RefRelayKeyCiphertext, RefFanoutFunction}},
		{"ws-connect", "ipv6", []string{"BUZZ_COMMUNITY", "PUSH_FUNCTION", "LAMBDA_ENDPOINT"}, []string{"DB_SSLMODE", "DB_AUTH", "RELAY_SIGNER"}, []Ref{RefDBHost, RefRelayKeyCiphertext}},
		{"ws-push", "ipv6", []string{"RELAY_KEY_CIPHERTEXT", "WS_MANAGEMENT_ENDPOINT", "SESSION_TABLE", "AWS_ENDPOINT_URL_KMS"},
			[]string{"DB_SSLMODE", "DB_AUTH", "PUSH_FUNCTION", "FANOUT_FUNCTION", "MEDIA_BUCKET", "AWS_ENDPOINT_URL_S3"}, []Ref{RefDBHost, RefDBSecretArn}},
		{"ingest", "ipv6", []string{"DB_HOST", "RELAY_KEY_CIPHERTEXT", "FANOUT_FUNCTION", "LAMBDA_ENDPOINT", "MEDIA_BUCKET", "AWS_ENDPOINT_URL_S3"}, nil, nil},
		{"ingest", "nat-gateway", []string{"RELAY_KEY_CIPHERTEXT", "MEDIA_BUCKET"}, []string{"LAMBDA_ENDPOINT", "AWS_ENDPOINT_URL_KMS", "AWS_ENDPOINT_URL_S3"}, nil},
		{"push-sender", "ipv6", []string{"PUSH_DIALER_FUNCTION", "LAMBDA_ENDPOINT", "RELAY_KEY_CIPHERTEXT", "DB_HOST"}, nil, nil},
		{"push-dialer", "ipv6", []string{"BUZZ_COMMUNITY"}, []string{"DB_SSLMODE", "DB_AUTH", "DB_HOST", "RELAY_SIGNER", "RELAY_KMS_KEY_ID", "PUSH_SENDER_FUNCTION", "PUSH_ALLOW_PRIVATE_CALLBACKS", "LAMBDA_ENDPOINT", "SESSION_TABLE", "MEDIA_BUCKET"},
			[]Ref{RefDBHost, RefDBSecretArn, RefKMSKeyArn, RefRelayKeyCiphertext, RefSessionTable}},
		{"fanout", "ipv6", []string{"WS_MANAGEMENT_ENDPOINT", "LAMBDA_ENDPOINT", "SESSION_TABLE"}, []string{"FANOUT_FUNCTION", "RELAY_SIGNER", "MEDIA_BUCKET"}, []Ref{RefRelayKeyCiphertext}},
	} {
		t.Run(c.fn+"/"+c.egress, func(t *testing.T) {
			f, ok := ByName(c.fn)
			if !ok {
				t.Fatalf("no function %s", c.fn)
			}
			asked := map[Ref]bool{}
			s := s
			s.Egress = c.egress
			env := Environment(f, s, func(r Ref) string { asked[r] = true; return fmt.Sprint("ref", int(r)) })
			for _, k := range c.has {
				if env[k] == "" {
					t.Errorf("%s has no %s", c.fn, k)
				}
			}
			for _, k := range c.not {
				if _, ok := env[k]; ok {
					t.Errorf("%s has %s=%q", c.fn, k, env[k])
				}
			}
			for _, r := range c.noRefs {
				if asked[r] {
					t.Errorf("%s asked for reference %d", c.fn, r)
				}
			}
		})
	}
}
