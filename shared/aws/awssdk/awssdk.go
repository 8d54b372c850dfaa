// Package awssdk is the one place the AWS SDK's configuration is loaded:
// every AWS client of the relay (KMS, SSM, Secrets Manager, RDS IAM auth
// tokens, the @connections API, Lambda Invoke) is built from what Load
// answers. Loading makes no network call.
package awssdk

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/buzzrelay/relay/shared/domain/relayurl"
)

// LocalRegion is the region of a client of the localdev emulator when
// AWS_REGION is not set.
const LocalRegion = "us-east-1"

// Load loads the configuration the standard way: region (AWS_REGION when
// region is empty), credentials and per-service endpoints
// (AWS_ENDPOINT_URL_KMS, ...) from the environment, in Lambda from the
// function's role. An endpoint on a loopback name is the localdev
// emulator, which checks no signature: its client gets static dummy
// credentials, and LocalRegion without a region. Any other client without
// a region is an error: every call it made would fail. With the emulated
// AWS costs in the environment (APIGW_COSTS=on, S3_LATENCY, ...:
// charges.go), every client built from the answer pays them.
func Load(ctx context.Context, region, endpoint string) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	local := false
	if u, err := url.Parse(endpoint); err == nil && endpoint != "" && relayurl.Loopback(u.Host) {
		local = true
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("localdev", "localdev", "")))
	}
	if region == "" && local {
		region = LocalRegion
	}
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: set AWS_REGION")
	}
	charges, err := processCharges()
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if charges.sdk() {
		cfg.APIOptions = append(cfg.APIOptions, charges.apiOption)
	}
	if r, ok := ctx.Value(requestsKey{}).(*Requests); ok {
		cfg.APIOptions = append(cfg.APIOptions, r.apiOption)
	}
	return cfg, nil
}
