// Package lambdainvoke invokes a Lambda function asynchronously (Invoke
// with InvocationType Event): the call returns once Lambda queued the
// payload, and Lambda runs the function, retrying a failed run twice. It
// implements fanout.Invoker for the fan-out function.
package lambdainvoke

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Async invokes one function asynchronously.
type Async struct {
	client   *lambda.Client
	function string
}

// New builds the client for function (name or ARN). endpoint overrides the
// Lambda endpoint (localdev's emulator); empty is the region's.
func New(cfg aws.Config, endpoint, function string, maxConns int) *Async {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = maxConns
	})
	c := lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.HTTPClient = hc
	})
	return &Async{client: c, function: function}
}

// InvokeAsync queues payload for the function. Lambda answers 202 when it
// accepted the event.
func (a *Async) InvokeAsync(ctx context.Context, payload []byte) error {
	out, err := a.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(a.function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		return fmt.Errorf("lambdainvoke: invoke %s: %w", a.function, err)
	}
	if out.StatusCode != http.StatusAccepted {
		return fmt.Errorf("lambdainvoke: invoke %s: status %d, want 202", a.function, out.StatusCode)
	}
	return nil
}
