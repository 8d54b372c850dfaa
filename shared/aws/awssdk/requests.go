package awssdk

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Requests counts the AWS requests (each attempt, as AWS bills them) of
// every client built from a configuration Load answered for a context
// that carries it (WithRequests), by "Service Operation" ("S3
// GetObject", "DynamoDB PutItem"): what localdev/cost's recorder prices.
// A context without one counts nothing.
type Requests struct {
	mu sync.Mutex
	n  map[string]int64
}

type requestsKey struct{}

// WithRequests is ctx carrying r, for the Load calls a cold start makes.
func WithRequests(ctx context.Context, r *Requests) context.Context {
	return context.WithValue(ctx, requestsKey{}, r)
}

// Counts is a copy of the counts so far.
func (r *Requests) Counts() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.n)
}

func (r *Requests) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int64{}
	}
	r.n[key]++
}

// apiOption counts each attempt of every operation of a client's stack.
func (r *Requests) apiOption(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("buzz/CountRequests",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			r.add(awsmiddleware.GetServiceID(ctx) + " " + awsmiddleware.GetOperationName(ctx))
			return next.HandleDeserialize(ctx, in)
		}), middleware.Before)
}
