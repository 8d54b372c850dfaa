package apigw

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/buzzrelay/relay/shared/aws/awssign"
	"github.com/buzzrelay/relay/shared/service/wire"
)

// Management is the API Gateway @connections client (PostToConnection,
// DeleteConnection). It implements wire.Sender.
//
// It calls the API directly, SigV4-signed by shared/aws/awssign, not through
// the SDK's apigatewaymanagementapi client, whose middleware stack cost
// most of the CPU of a post; the requests are the ones the SDK sends.
type Management struct {
	c   *awssign.Client
	ep  awssign.Endpoint
	err error // a bad endpoint, reported by every call
}

// NewManagement builds the client for endpoint, the WebSocket API's
// management URL (https://{api-id}.execute-api.{region}.amazonaws.com/{stage},
// or the localdev emulator), signing for execute-api in cfg.Region with
// cfg.Credentials. maxConns sizes the idle connection pool to the posts
// fan-out keeps in flight. Throttling (429 LimitExceededException) and
// 5xx answers are retried with backoff, 3 attempts in all, as the SDK's
// standard retryer did. An invalid endpoint fails every call.
func NewManagement(cfg aws.Config, endpoint string, maxConns int) *Management {
	ep, err := awssign.ParseEndpoint(endpoint)
	return &Management{c: awssign.New(cfg, "execute-api", maxConns), ep: ep, err: err}
}

// Post sends data as one message to the connection; a 410 Gone is
// wire.ErrGone and a 413 wire.ErrTooLarge.
func (m *Management) Post(ctx context.Context, connectionID string, data []byte) error {
	return m.call(ctx, "post to connection", http.MethodPost, connectionID, data)
}

// Disconnect closes the connection from the server side.
func (m *Management) Disconnect(ctx context.Context, connectionID string) error {
	return m.call(ctx, "delete connection", http.MethodDelete, connectionID, nil)
}

// call makes one @connections request, its errors classified.
func (m *Management) call(ctx context.Context, op, method, id string, body []byte) error {
	if m.err != nil {
		return fmt.Errorf("apigw: %s %s: %w", op, id, m.err)
	}
	if id == "" {
		return fmt.Errorf("apigw: %s: empty connection id", op)
	}
	_, err := m.c.Do(ctx, &awssign.Request{
		Method:      method,
		URL:         m.ep.URL("/@connections/", id, ""),
		ContentType: "application/octet-stream",
		Body:        body,
	})
	if err == nil {
		return nil
	}
	var se *awssign.StatusError
	if errors.As(err, &se) {
		switch se.StatusCode {
		case http.StatusGone:
			err = wire.ErrGone
		case http.StatusRequestEntityTooLarge:
			err = wire.ErrTooLarge
		}
	}
	return fmt.Errorf("apigw: %s %s: %w", op, id, err)
}
