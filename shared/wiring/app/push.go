package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/lambdainvoke"
	"github.com/buzzrelay/relay/shared/service/wire"
	"github.com/buzzrelay/relay/shared/transport/apigw"
)

// openGreeter builds the asynchronous invocation of PUSH_FUNCTION (at
// LAMBDA_ENDPOINT) that $connect hands each accepted connection to.
func (a *App) openGreeter(ctx context.Context) error {
	fn := a.Config.PushFunction
	if fn == "" {
		a.Log.Warn("PUSH_FUNCTION is not set: a connection gets its NIP-42 challenge with the reply to its first message only")
		return nil
	}
	endpoint := a.Config.Fanout.LambdaEndpoint
	sdk, err := awssdk.Load(ctx, a.Config.AWSRegion, endpoint)
	if err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	a.Greeter = lambdainvoke.New(sdk, endpoint, fn, 4)
	return nil
}

// openPush builds the push function's work: the challenges under the
// relay key (loaded from the configuration alone, no database), the
// @connections client at WS_MANAGEMENT_ENDPOINT and, with SESSION_TABLE,
// the registry of open connections in it. Without SESSION_TABLE the
// greeting records nothing and a liveness tick sends nothing (nothing
// lists the open connections without the database).
func (a *App) openPush(ctx context.Context) error {
	cfg := a.Config
	if a.Challenges.Zero() {
		sg, err := cfg.Signer(ctx)
		if err != nil {
			return fmt.Errorf("relay key: %w", err)
		}
		if a.Challenges, err = challenges(ctx, sg); err != nil {
			return err
		}
	}
	if a.Sessions == nil && cfg.Session.On() {
		if err := a.openSessions(ctx); err != nil {
			return err
		}
	}
	endpoint := cfg.WSManagementEndpoint
	if endpoint == "" {
		return errors.New("WS_MANAGEMENT_ENDPOINT is not set: the push function posts through the WebSocket API's @connections endpoint")
	}
	sdk, err := awssdk.Load(ctx, cfg.AWSRegion, endpoint)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	a.Push = &wire.Pusher{Sender: apigw.NewManagement(sdk, endpoint, wire.PostsInFlight), Challenges: a.Challenges, Log: a.Log}
	if a.Sessions != nil {
		a.Push.Open = a.Sessions
	} else {
		a.Log.Warn("SESSION_TABLE is not set: no registry of open connections, so no liveness frames")
	}
	return nil
}

// PushHandler is functions/ws-push's handler: a greeting from $connect or
// a liveness tick (wire.Pusher.Handle).
func (a *App) PushHandler() func(context.Context, json.RawMessage) error {
	p := a.Push
	return func(ctx context.Context, payload json.RawMessage) error { return p.Handle(ctx, payload) }
}
