package ddbttl_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/localdev/ddbttl"
	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
)

// TestSweepDeletesOnlyExpiredItems: a sweep deletes the items whose ttl
// is past, across scan pages, and keeps those expiring later, those
// without a ttl and those whose ttl is not a number.
func TestSweepDeletesOnlyExpiredItems(t *testing.T) {
	ctx := context.Background()
	im := sessionstest.DynamoDB(t)
	api := im.API.(*dynamodb.Client)
	now := time.Now()
	put := func(pk string, ttl types.AttributeValue) {
		t.Helper()
		it := map[string]types.AttributeValue{
			ddbsessions.PartitionKey: &types.AttributeValueMemberS{Value: pk},
			ddbsessions.SortKey:      &types.AttributeValueMemberS{Value: "x"},
			"pad":                    &types.AttributeValueMemberS{Value: string(make([]byte, 4000))},
		}
		if ttl != nil {
			it[ddbsessions.TTLAttribute] = ttl
		}
		if _, err := api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &im.Table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	at := func(d time.Duration) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(d).Unix(), 10)}
	}
	// 400 expired items of 4 KB: more than one scan page (1 MB).
	for i := range 400 {
		put("gone-"+strconv.Itoa(i), at(-time.Minute))
	}
	put("later", at(time.Hour))
	put("no-ttl", nil)
	put("text-ttl", &types.AttributeValueMemberS{Value: "0"})

	n, err := ddbttl.Sweep(ctx, api, im.Table, now)
	if err != nil || n != 400 {
		t.Fatalf("sweep: %d deleted, %v; want 400", n, err)
	}
	out, err := api.Scan(ctx, &dynamodb.ScanInput{TableName: &im.Table, ConsistentRead: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, it := range out.Items {
		left[it[ddbsessions.PartitionKey].(*types.AttributeValueMemberS).Value] = true
	}
	if len(left) != 3 || !left["later"] || !left["no-ttl"] || !left["text-ttl"] {
		t.Fatalf("left after the sweep: %v", left)
	}
}
