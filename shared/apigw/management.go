package apigw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"

	"github.com/buzzrelay/relay/shared/fanout"
	"github.com/buzzrelay/relay/shared/relayurl"
)

// Management is the API Gateway @connections client (PostToConnection,
// DeleteConnection). It implements fanout.Sender.
type Management struct {
	client *apigatewaymanagementapi.Client
}

// SDKConfig is the AWS SDK configuration of the clients that post to
// connections and invoke the fan-out function: region and credentials the
// standard way (the function's role in Lambda), region us-east-1 when
// region is empty; an endpoint on a loopback name is the localdev emulator,
// which checks no signature, and gets static dummy credentials.
func SDKConfig(ctx context.Context, endpoint, region string) (aws.Config, error) {
	if region == "" {
		region = "us-east-1"
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if u, err := url.Parse(endpoint); err == nil && relayurl.Loopback(u.Host) {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("localdev", "localdev", "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("apigw: load AWS configuration: %w", err)
	}
	return cfg, nil
}

// NewManagement builds the client for endpoint, the WebSocket API's
// management URL (https://{api-id}.execute-api.{region}.amazonaws.com/{stage},
// or the localdev emulator). maxConns sizes the idle connection pool to the
// posts fan-out keeps in flight. Throttling (LimitExceededException) is
// retried with backoff by the SDK's standard retryer.
func NewManagement(cfg aws.Config, endpoint string, maxConns int) *Management {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = maxConns * 2
		t.MaxIdleConnsPerHost = maxConns
	})
	c := apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = hc
	})
	return &Management{client: c}
}

// Post sends data as one message to the connection; a 410 Gone is
// fanout.ErrGone and a 413 fanout.ErrTooLarge.
func (m *Management) Post(ctx context.Context, connectionID string, data []byte) error {
	_, err := m.client.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{
		ConnectionId: aws.String(connectionID), Data: data,
	})
	if err != nil {
		return classify("post to connection", connectionID, err)
	}
	return nil
}

// Disconnect closes the connection from the server side.
func (m *Management) Disconnect(ctx context.Context, connectionID string) error {
	_, err := m.client.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(connectionID)})
	if err != nil {
		return classify("delete connection", connectionID, err)
	}
	return nil
}

func classify(op, id string, err error) error {
	var gone *types.GoneException
	var large *types.PayloadTooLargeException
	var re *awshttp.ResponseError
	switch {
	case errors.As(err, &gone), errors.As(err, &re) && re.HTTPStatusCode() == http.StatusGone:
		return fmt.Errorf("apigw: %s %s: %w", op, id, fanout.ErrGone)
	case errors.As(err, &large), errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("apigw: %s %s: %w", op, id, fanout.ErrTooLarge)
	}
	return fmt.Errorf("apigw: %s %s: %w", op, id, err)
}
