package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/lambdainvoke"
	domainpush "github.com/buzzrelay/relay/shared/domain/push"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/push"
)

// openNotify builds push notifications (shared/service/push) when
// PUSH_SENDER_FUNCTION is set: the rules ingest applies to 30390 and 30350,
// the hand-off after each commit (committing functions: invokes the sender
// at LAMBDA_ENDPOINT), the NIP-11 advertisement and the sender's work.
func (a *App) openNotify(ctx context.Context, parts Parts) error {
	cfg := a.Config.Push
	if !cfg.On() {
		return nil
	}
	profiles, err := domainpush.ParseProfiles(cfg.Profiles)
	if err != nil {
		return err
	}
	policy := domainpush.Policy{AllowPrivate: cfg.AllowPrivate}
	n := &push.Service{
		Store: a.Store, Communities: a.Communities, Policy: policy, Log: a.Log,
		Door: a.Guard, Client: push.NewClient(policy),
		Profiles: profiles, PublicHost: a.Config.PublicHost, Relay: a.signer(),
	}
	if cfg.Gateway != "" && len(profiles) > 0 && a.Sealer != nil {
		n.Gateway = cfg.Gateway
		n.Executor = &push.ExecutorKeys{Store: a.Store, Sealer: a.Sealer}
		if a.Keys != nil {
			n.Keys = a.Keys
		}
	}
	if cfg.DialerFunction != "" && parts&notifies != 0 {
		// The sender's tries go to the dialer outside the VPC (one
		// synchronous Invoke each, over the same Lambda endpoint as the
		// hand-offs).
		sdk, err := awssdk.Load(ctx, a.Config.AWSRegion, a.Config.Fanout.LambdaEndpoint)
		if err != nil {
			return fmt.Errorf("push: %w", err)
		}
		n.Dialer = push.Remote{Call: lambdainvoke.NewSync(sdk, a.Config.Fanout.LambdaEndpoint, cfg.DialerFunction)}
	}
	if parts&writes != 0 {
		sdk, err := awssdk.Load(ctx, a.Config.AWSRegion, a.Config.Fanout.LambdaEndpoint)
		if err != nil {
			return fmt.Errorf("push: %w", err)
		}
		n.Sender = lambdainvoke.New(sdk, a.Config.Fanout.LambdaEndpoint, cfg.SenderFunction, 4)
		a.Ingest = a.Ingest.WithPush(n)
	}
	a.Notify = n
	return nil
}

// pushInfo is what NIP-11 says of push for community c (bridge.Bridge.Push).
func (a *App) pushInfo(ctx context.Context, c *community.Community) (bool, *domainpush.Descriptor, error) {
	desc, err := a.Notify.Descriptor(ctx, c, a.Config.PublicHost)
	return true, desc, err
}

// PushSender is functions/push-sender's handler: one batch of committed
// events matched and delivered (push.Service.Deliver).
func (a *App) PushSender() func(context.Context, json.RawMessage) error {
	n := a.Notify
	return func(ctx context.Context, payload json.RawMessage) error { return n.Deliver(ctx, payload) }
}

// ErrPushOff is the push sender's cold start without PUSH_SENDER_FUNCTION.
var ErrPushOff = errors.New("PUSH_SENDER_FUNCTION is not set: push is off")

// PushDialer is functions/push-dialer's handler: one try's request made
// from outside the VPC (push.Direct), under the callback policy
// (PUSH_ALLOW_PRIVATE_CALLBACKS); it needs no database, key or secret.
func (a *App) PushDialer() func(context.Context, push.DialRequest) (push.DialAnswer, error) {
	return PushDialer(a.Config.Push.AllowPrivate)
}

// PushDialer is the dialer's handler under the callback policy allowPrivate
// (the emulator serves it in process too).
func PushDialer(allowPrivate bool) func(context.Context, push.DialRequest) (push.DialAnswer, error) {
	return push.Direct{Client: push.NewClient(domainpush.Policy{AllowPrivate: allowPrivate})}.Handler()
}
