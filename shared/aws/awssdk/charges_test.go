package awssdk_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
)

// APIGW_COSTS=on charges every AWS call the relay makes its default, each
// variable overrides its own, and anything else is refused at start.
func TestChargesFromEnv(t *testing.T) {
	all := awssdk.Charges{S3: awssdk.DefaultS3Latency, DynamoDB: awssdk.DefaultDynamoDBLatency, KMS: awssdk.DefaultKMSLatency,
		LambdaInvoke: awssdk.DefaultLambdaInvokeLatency, AuroraRoundTrip: awssdk.DefaultAuroraRoundTrip}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want awssdk.Charges
		bad  bool
	}{
		{"none", nil, awssdk.Charges{}, false},
		{"off", map[string]string{"APIGW_COSTS": "off"}, awssdk.Charges{}, false},
		{"on", map[string]string{"APIGW_COSTS": "on"}, all, false},
		{"one alone", map[string]string{"DYNAMODB_LATENCY": "7ms"}, awssdk.Charges{DynamoDB: 7 * time.Millisecond}, false},
		{"on, one off", map[string]string{"APIGW_COSTS": "on", "AURORA_ROUND_TRIP": "0s"},
			awssdk.Charges{S3: all.S3, DynamoDB: all.DynamoDB, KMS: all.KMS, LambdaInvoke: all.LambdaInvoke}, false},
		{"bad switch", map[string]string{"APIGW_COSTS": "maybe"}, awssdk.Charges{}, true},
		{"no unit", map[string]string{"S3_LATENCY": "30"}, awssdk.Charges{}, true},
		{"negative", map[string]string{"KMS_LATENCY": "-1ms"}, awssdk.Charges{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := awssdk.ChargesFromEnv(func(k string) string { return tc.env[k] })
			if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
				t.Fatalf("got %+v, %v; want %+v (error: %v)", got, err, tc.want, tc.bad)
			}
		})
	}
	for id, want := range map[string]time.Duration{"S3": all.S3, "DynamoDB": all.DynamoDB, "KMS": all.KMS, "Lambda": all.LambdaInvoke, "SSM": 0} {
		if got := all.Of(id); got != want {
			t.Errorf("the charge of a %s request is %s, want %s", id, got, want)
		}
	}
}

// TestAPIGWCostsOnChargesEveryAWSCall: every SDK client built from
// awssdk.Load's configuration waits its service's charge before each
// request (S3, KMS and Lambda here; the session store's DynamoDB client
// is built the same way, its charge mapped above), and a configuration
// loaded without the variables charges nothing.
func TestAPIGWCostsOnChargesEveryAWSCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// A client error: answered at once, never retried.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ValidationException","message":"no"}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, k := range awssdk.ChargeVars {
		t.Setenv(k, "")
	}
	plain, err := awssdk.Load(ctx, "", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	const charge = 300 * time.Millisecond
	t.Setenv("APIGW_COSTS", "on")
	for _, k := range []string{"S3_LATENCY", "KMS_LATENCY", "LAMBDA_INVOKE_LATENCY"} {
		t.Setenv(k, charge.String())
	}
	charged, err := awssdk.Load(ctx, "", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(charged.APIOptions) != len(plain.APIOptions)+1 {
		t.Fatalf("with the costs on the configuration adds %d stack options, want 1", len(charged.APIOptions)-len(plain.APIOptions))
	}
	calls := map[string]func(aws.Config) error{
		"S3": func(c aws.Config) error {
			_, err := s3.NewFromConfig(c, func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(srv.URL), true }).
				GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
			return err
		},
		"KMS": func(c aws.Config) error {
			_, err := kms.NewFromConfig(c, func(o *kms.Options) { o.BaseEndpoint = aws.String(srv.URL) }).
				Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: []byte("x")})
			return err
		},
		"Lambda": func(c aws.Config) error {
			_, err := lambda.NewFromConfig(c, func(o *lambda.Options) { o.BaseEndpoint = aws.String(srv.URL) }).
				Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("f"), InvocationType: "Event"})
			return err
		},
	}
	for name, call := range calls {
		start := time.Now()
		if err := call(charged); err == nil {
			t.Fatalf("%s: the stand-in's 400 was not an error", name)
		}
		if d := time.Since(start); d < charge {
			t.Errorf("%s request with the costs on took %s, less than its charge %s", name, d, charge)
		}
	}
}

// A context carrying Requests counts every request of the clients built
// for it, by service and operation.
func TestRequestsCountsEveryClientsRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	defer srv.Close()
	for _, k := range awssdk.ChargeVars {
		t.Setenv(k, "")
	}
	var n awssdk.Requests
	ctx := awssdk.WithRequests(context.Background(), &n)
	cfg, err := awssdk.Load(ctx, "", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(srv.URL), true })
	for range 2 {
		_, _ = c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	}
	_, _ = c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("b")})
	if got := n.Counts(); got["S3 GetObject"] != 2 || got["S3 ListObjectsV2"] != 1 || len(got) != 2 {
		t.Fatalf("counted %v, want 2 S3 GetObject and 1 S3 ListObjectsV2", got)
	}
}
