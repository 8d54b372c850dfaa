package awssdk

import (
	"context"
	"fmt"
	"os"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// # What an AWS call costs behind AWS that the local stand-ins do not
//
// Locally every AWS service the relay calls is a process on loopback (the
// S3 server of localdev/s3local, the session store's local DynamoDB,
// local-kms, the emulator's Lambda Invoke API, Postgres): a call takes a
// fraction of a millisecond, so no local figure shows what a path that
// calls them costs behind AWS. Charges puts each call's latency back,
// off unless asked for: APIGW_COSTS=on (the emulator's switch, which also
// turns on API Gateway's and Lambda's costs: localdev/emulator/costs.go)
// sets every default below, and each variable sets its own (a Go
// duration; 0s turns that one off). A deployment sets none of them
// (shared/wiring/lambdas gives the functions their environment).
//
// Sources:
//   - S3 (S3_LATENCY, 30 ms a request): "Timeouts and Retries for
//     Latency-Sensitive Applications" in AWS's whitepaper "Best Practices
//     Design Patterns: Optimizing Amazon S3 Performance": requests under
//     512 KB see median latencies "often in the tens of milliseconds"
//     (first byte included); a LIST is no faster than a GET.
//   - DynamoDB (DYNAMODB_LATENCY, 5 ms a request): the DynamoDB product
//     page's "single-digit millisecond performance at any scale", and the
//     AWS Knowledge Center's "DynamoDB high latency": atomic operations such
//     as GetItem and PutItem average single-digit milliseconds.
//   - KMS (KMS_LATENCY, 10 ms a request): AWS publishes no figure; an
//     HTTPS request to a service in the same Region that works in an HSM,
//     chosen by reasoning (a deployment measures its own).
//   - Lambda Invoke (LAMBDA_INVOKE_LATENCY, 10 ms a request): an
//     asynchronous invocation (InvocationType Event) returns once Lambda
//     queued the event; AWS publishes no figure, chosen by reasoning as a
//     same-Region HTTPS request. The emulator charges the same figure to
//     the Invokes it serves in process (localdev/emulator/lambda.go).
//   - Aurora (AURORA_ROUND_TRIP, 1 ms a round trip): a network round trip
//     between a function and an Aurora Serverless v2 writer in the same
//     Availability Zone, about 0.5-1 ms (AWS's in-AZ latency is
//     sub-millisecond; a function in another AZ pays more). Charged per
//     statement or batch by the pool (store.Options.RoundTrip), not here.

// Defaults of Charges when APIGW_COSTS=on.
const (
	DefaultS3Latency           = 30 * time.Millisecond
	DefaultDynamoDBLatency     = 5 * time.Millisecond
	DefaultKMSLatency          = 10 * time.Millisecond
	DefaultLambdaInvokeLatency = 10 * time.Millisecond
	DefaultAuroraRoundTrip     = time.Millisecond
)

// Charges are the latencies added to the relay's AWS calls; the zero
// value adds none.
type Charges struct {
	// S3, DynamoDB, KMS and LambdaInvoke are spent before each request to
	// that service (each attempt, retries included).
	S3, DynamoDB, KMS, LambdaInvoke time.Duration
	// AuroraRoundTrip is spent before each statement or batch the pool
	// sends (store.Options.RoundTrip).
	AuroraRoundTrip time.Duration
}

// ChargeVars are the variables ChargesFromEnv reads, the switch first;
// whatever runs the relay with an environment of its own copies them.
var ChargeVars = []string{"APIGW_COSTS", "S3_LATENCY", "DYNAMODB_LATENCY", "KMS_LATENCY", "LAMBDA_INVOKE_LATENCY", "AURORA_ROUND_TRIP"}

// CostsOn reads the APIGW_COSTS switch: on, off (or unset), or an error.
func CostsOn(getenv func(string) string) (bool, error) {
	switch v := getenv("APIGW_COSTS"); v {
	case "", "off", "0", "false":
		return false, nil
	case "on", "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("APIGW_COSTS must be on or off, got %q", v)
	}
}

// ChargesFromEnv reads the charges: APIGW_COSTS=on sets every default, and
// each variable overrides its own.
func ChargesFromEnv(getenv func(string) string) (Charges, error) {
	var c Charges
	on, err := CostsOn(getenv)
	if err != nil {
		return c, err
	}
	if on {
		c = Charges{S3: DefaultS3Latency, DynamoDB: DefaultDynamoDBLatency, KMS: DefaultKMSLatency,
			LambdaInvoke: DefaultLambdaInvokeLatency, AuroraRoundTrip: DefaultAuroraRoundTrip}
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"S3_LATENCY", &c.S3}, {"DYNAMODB_LATENCY", &c.DynamoDB}, {"KMS_LATENCY", &c.KMS},
		{"LAMBDA_INVOKE_LATENCY", &c.LambdaInvoke}, {"AURORA_ROUND_TRIP", &c.AuroraRoundTrip}} {
		if v := getenv(d.key); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x < 0 {
				return c, fmt.Errorf("%s must be a duration such as 5ms, got %q", d.key, v)
			}
			*d.dst = x
		}
	}
	return c, nil
}

// Of is the charge of one request to the service an SDK client names
// (its ServiceID); 0 for a service not charged.
func (c Charges) Of(serviceID string) time.Duration {
	switch serviceID {
	case "S3":
		return c.S3
	case "DynamoDB":
		return c.DynamoDB
	case "KMS":
		return c.KMS
	case "Lambda":
		return c.LambdaInvoke
	}
	return 0
}

// sdk reports whether any SDK client's request is charged.
func (c Charges) sdk() bool { return c.S3 > 0 || c.DynamoDB > 0 || c.KMS > 0 || c.LambdaInvoke > 0 }

// chargeID names the middleware in every client's stack.
const chargeID = "buzz/EmulatedLatency"

// apiOption adds the charge to a client's stack, around the HTTP round
// trip of each attempt: every client built from Load's configuration
// (S3, DynamoDB, KMS, Lambda, whatever comes next) pays it alike.
func (c Charges) apiOption(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc(chargeID,
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			if d := c.Of(awsmiddleware.GetServiceID(ctx)); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return middleware.DeserializeOutput{}, middleware.Metadata{}, ctx.Err()
				}
			}
			return next.HandleDeserialize(ctx, in)
		}), middleware.Before)
}

// processCharges are the charges of this process's environment.
func processCharges() (Charges, error) { return ChargesFromEnv(os.Getenv) }
