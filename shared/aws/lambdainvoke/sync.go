package lambdainvoke

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Sync invokes one function synchronously (InvocationType RequestResponse)
// and returns its answer: the push sender's hop to the push dialer
// (shared/service/push.Caller). Only a throttled Invoke
// (TooManyRequestsException: the function did not run) is retried; any
// other failure is returned at once, so that a request the function may
// have made is never made twice by a retry here.
type Sync struct {
	c        *lambda.Client
	function string
}

// NewSync builds the client for function at endpoint ("" : the SDK's
// default, as New).
func NewSync(cfg aws.Config, endpoint, function string) *Sync {
	c := lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.Retryables = []retry.IsErrorRetryable{retry.RetryableErrorCode{
				Codes: map[string]struct{}{"TooManyRequestsException": {}},
			}}
		})
	})
	return &Sync{c: c, function: function}
}

// Call invokes the function with payload and returns its answer; a
// function error (X-Amz-Function-Error) is an error.
func (s *Sync) Call(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := s.c.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(s.function),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return nil, fmt.Errorf("lambdainvoke: call %s: %w", s.function, err)
	}
	if out.FunctionError != nil {
		return nil, fmt.Errorf("lambdainvoke: call %s: function error %s: %.200s", s.function, *out.FunctionError, out.Payload)
	}
	return out.Payload, nil
}
