package apigw

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"

	"github.com/buzzrelay/relay/shared/fanout"
)

// Management is the API Gateway @connections client (PostToConnection,
// DeleteConnection). It implements fanout.Sender.
type Management struct {
	client *apigatewaymanagementapi.Client
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
