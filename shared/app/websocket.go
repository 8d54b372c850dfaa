package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/buzzrelay/relay/shared/apigw"
	"github.com/buzzrelay/relay/shared/config"
	"github.com/buzzrelay/relay/shared/fanout"
	"github.com/buzzrelay/relay/shared/lambdainvoke"
	"github.com/buzzrelay/relay/shared/query"
	"github.com/buzzrelay/relay/shared/wsrelay"
)

// Fanout builds live delivery over the @connections API at
// WS_MANAGEMENT_ENDPOINT. The SDK takes region and credentials the standard
// way (the function's role in Lambda); an endpoint on a loopback address is
// the localdev emulator and gets static dummy credentials (it does not check
// signatures) and us-east-1 unless AWS_REGION says otherwise.
func (a *App) Fanout(ctx context.Context) (*fanout.Fanout, error) {
	endpoint := a.Config.WSManagementEndpoint
	if endpoint == "" {
		return nil, errors.New("WS_MANAGEMENT_ENDPOINT is not set: live delivery needs the WebSocket API's @connections endpoint (https://{api-id}.execute-api.{region}.amazonaws.com/{stage})")
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("WS_MANAGEMENT_ENDPOINT must be an http(s) URL, got %q", endpoint)
	}
	region := a.Config.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("localdev", "localdev", "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("fanout: load AWS configuration: %w", err)
	}
	// Idle connections for every post in flight: one instance's replies
	// and deliveries, or, in localdev, every emulated fan-out run at once
	// (a smaller pool closes and re-dials connections under load).
	mgmt := apigw.NewManagement(cfg, endpoint, 16*fanout.DefaultConcurrency)
	fo := fanout.New(fanout.NewRegistry(a.Store), mgmt, a.reader(), a.Log)
	return fo, a.asyncFanout(fo, cfg)
}

// asyncFanout hands large audiences to the fan-out function named by
// FANOUT_FUNCTION (name or ARN; unset: every delivery is inline), invoked
// asynchronously at LAMBDA_ENDPOINT (unset: the region's Lambda endpoint).
// FANOUT_INLINE_MAX and FANOUT_BATCH_SIZE override the defaults of
// shared/fanout.
func (a *App) asyncFanout(fo *fanout.Fanout, cfg aws.Config) error {
	fn := a.Config.Getenv("FANOUT_FUNCTION")
	if fn == "" {
		return nil
	}
	var err error
	if fo.InlineMax, err = envInt(a.Config.Getenv, "FANOUT_INLINE_MAX"); err != nil {
		return err
	}
	if fo.BatchSize, err = envInt(a.Config.Getenv, "FANOUT_BATCH_SIZE"); err != nil {
		return err
	}
	fo.Async = lambdainvoke.New(cfg, a.Config.Getenv("LAMBDA_ENDPOINT"), fn, fanout.DefaultConcurrency)
	return nil
}

func envInt(getenv func(string) string, key string) (int, error) {
	v := getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive integer, got %q", key, v)
	}
	return n, nil
}

// FanoutFunction is functions/fanout: it delivers one batch that ingest or
// ws-message handed over (shared/fanout, dispatch.go).
func (a *App) FanoutFunction(fo *fanout.Fanout) func(context.Context, json.RawMessage) error {
	return func(ctx context.Context, payload json.RawMessage) error { return fo.DeliverBatch(ctx, payload) }
}

// WSConnect is functions/ws-connect ($connect). It never touches the
// database (the connection is registered by its first message), so the
// handshake does not wait for a paused Aurora to resume.
func (a *App) WSConnect() apigw.WebSocketHandler {
	return apigw.WebSocket(a.wsRelay(nil, nil), a.origin())
}

// Connect is functions/ws-connect built from the environment alone: no
// pool, no relay key, no AWS call at cold start.
func Connect(log *slog.Logger) (apigw.WebSocketHandler, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	a := &App{Config: cfg, Log: log}
	return apigw.WebSocket(wsrelay.New(nil, nil, nil, nil, nil, nil, log), a.origin()), nil
}

// WSDisconnect is functions/ws-disconnect ($disconnect).
func (a *App) WSDisconnect() apigw.WebSocketHandler {
	return apigw.WebSocket(a.wsRelay(nil, nil), a.origin())
}

// WSMessage is functions/ws-message ($default): replies and live delivery
// go out through fo's @connections client.
func (a *App) WSMessage(fo *fanout.Fanout) apigw.WebSocketHandler {
	return apigw.WebSocket(a.wsRelay(fo, fo.Sender), a.origin())
}

func (a *App) wsRelay(fo *fanout.Fanout, s fanout.Sender) *wsrelay.Relay {
	reg := fanout.NewRegistry(a.Store)
	if fo != nil {
		reg = fo.Registry
	}
	r := wsrelay.New(reg, a.Ingest, a.reader(), fo, s, a.Communities.ResolveID, a.Log)
	r.Admit = a.Communities.Admit
	r.Limiter = a.Limiter
	return r
}

func (a *App) reader() *query.Engine { return query.New(a.Store, a.Signer) }

// Authorizer is functions/ws-authorize built from the environment alone
// (BUZZ_HOST_HEADER): no pool, no key, no AWS call.
func Authorizer() (apigw.WebSocketAuthorizer, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return apigw.Authorize((&App{Config: cfg}).origin()), nil
}
