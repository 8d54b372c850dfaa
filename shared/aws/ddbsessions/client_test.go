package ddbsessions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/session"
)

// TestSessionClientPaysTheEmulatedCharges: the session store's DynamoDB
// client is built as every AWS client is (awssdk.Load), so its requests
// are counted by awssdk.Requests and, with APIGW_COSTS=on, each pays
// DYNAMODB_LATENCY (it was built on its own and paid nothing, so the
// costs-on figures left the session store out).
func TestSessionClientPaysTheEmulatedCharges(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// A client error: answered at once, never retried.
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.validate#ValidationException","message":"no"}`))
	}))
	defer srv.Close()
	for _, k := range awssdk.ChargeVars {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.URL)
	const charge = 300 * time.Millisecond
	t.Setenv("APIGW_COSTS", "on")
	t.Setenv("DYNAMODB_LATENCY", charge.String())
	var n awssdk.Requests
	c, err := ddbsessions.Client(awssdk.WithRequests(context.Background(), &n))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}, "sk": &types.AttributeValueMemberS{Value: "y"}}})
	if err == nil {
		t.Fatal("the stand-in's 400 was not an error")
	}
	if d := time.Since(start); d < charge {
		t.Errorf("a session store request with the costs on took %s, less than DYNAMODB_LATENCY %s", d, charge)
	}
	if got := n.Counts(); got["DynamoDB GetItem"] != 1 {
		t.Errorf("counted %v, want 1 DynamoDB GetItem", got)
	}
}

// stored is Store.Subscribe's error alone.
func subErr(_ session.Held, err error) error { return err }
