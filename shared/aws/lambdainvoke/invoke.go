// Package lambdainvoke invokes a Lambda function asynchronously (Invoke
// with InvocationType Event): the call returns once Lambda queued the
// payload, and Lambda runs the function, retrying a failed run twice. It
// implements fanout.Invoker for the fan-out function.
//
// It calls Lambda's REST API directly, SigV4-signed by shared/aws/awssign,
// not through the SDK's lambda client, whose middleware stack cost most
// of the CPU of a call; the request is the one the SDK sends.
package lambdainvoke

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/buzzrelay/relay/shared/aws/awssign"
)

// Async invokes one function asynchronously.
type Async struct {
	c        *awssign.Client
	req      awssign.Request // the invocation, without its payload
	function string
	err      error // a bad endpoint, reported by every call
}

// eventHeader asks for an asynchronous invocation.
var eventHeader = http.Header{"X-Amz-Invocation-Type": {"Event"}}

// New builds the client for function (name, name:qualifier or ARN).
// endpoint overrides the Lambda endpoint (localdev's emulator); empty is
// the one the SDK would use (cfg.BaseEndpoint or AWS_ENDPOINT_URL_LAMBDA
// when set, else the region's, https://lambda.{region}.amazonaws.com in
// the aws partition). Calls are signed for lambda in cfg.Region with
// cfg.Credentials; maxConns sizes the idle connection pool. Throttling
// (429 TooManyRequestsException) and 5xx answers are retried with
// backoff, 3 attempts in all. An invalid endpoint fails every call.
func New(cfg aws.Config, endpoint, function string, maxConns int) *Async {
	if endpoint == "" {
		endpoint = defaultEndpoint(cfg)
	}
	a := &Async{c: awssign.New(cfg, "lambda", maxConns), function: function}
	ep, err := awssign.ParseEndpoint(endpoint)
	if err != nil {
		a.err = err
		return a
	}
	a.req = awssign.Request{
		Method:      http.MethodPost,
		URL:         ep.URL("/2015-03-31/functions/", function, "/invocations"),
		ContentType: "application/octet-stream",
		Header:      eventHeader,
	}
	return a
}

// defaultEndpoint is the endpoint the SDK's client resolves for cfg (its
// endpoint rules: partition, FIPS, dual-stack, configured endpoint URLs).
// Building the client makes no call; it is only asked for its options.
func defaultEndpoint(cfg aws.Config) string {
	o := lambda.NewFromConfig(cfg).Options()
	if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
		return *o.BaseEndpoint
	}
	fallback := "https://lambda." + cfg.Region + ".amazonaws.com"
	if o.EndpointResolverV2 == nil {
		return fallback
	}
	p := lambda.EndpointParameters{Region: aws.String(cfg.Region)}
	if o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled {
		p.UseFIPS = aws.Bool(true)
	}
	if o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled {
		p.UseDualStack = aws.Bool(true)
	}
	e, err := o.EndpointResolverV2.ResolveEndpoint(context.Background(), p)
	if err != nil {
		return fallback
	}
	return e.URI.String()
}

// InvokeAsync queues payload for the function. Lambda answers 202 when it
// accepted the event; any other success status is an error.
func (a *Async) InvokeAsync(ctx context.Context, payload []byte) error {
	if a.err != nil {
		return fmt.Errorf("lambdainvoke: invoke %s: %w", a.function, a.err)
	}
	r := a.req
	r.Body = payload
	status, err := a.c.Do(ctx, &r)
	if err != nil {
		return fmt.Errorf("lambdainvoke: invoke %s: %w", a.function, err)
	}
	if status != http.StatusAccepted {
		return fmt.Errorf("lambdainvoke: invoke %s: status %d, want 202", a.function, status)
	}
	return nil
}
