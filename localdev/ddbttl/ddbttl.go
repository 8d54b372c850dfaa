// Package ddbttl expires the local sessions table's items by their TTL
// attribute, as DynamoDB's Time to Live does behind AWS: dynalite keeps
// the attribute but never deletes by it, so a long `make dev` would hold
// every CLOSE's tombstone, every claim and every gone connection's items
// in memory until `make stop`. The relay never counts on the deletion
// (its readers skip expired items, as they must behind AWS, where TTL
// deletes within days); this only bounds the local server's memory. It
// scans, which the relay's functions are never granted: a local service.
package ddbttl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
)

// Every is how often Run sweeps.
const Every = time.Minute

// API is what a sweep calls.
type API interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Sweep deletes the items of table whose TTL attribute (a number, unix
// seconds) is below now, and returns how many it deleted. Each delete is
// conditional on the item being expired still: one whose expiry was
// raised since the scan read it stays.
func Sweep(ctx context.Context, api API, table string, now time.Time) (int, error) {
	names := map[string]string{"#ttl": ddbsessions.TTLAttribute}
	nowV := map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)}}
	deleted := 0
	var start map[string]types.AttributeValue
	for {
		out, err := api.Scan(ctx, &dynamodb.ScanInput{TableName: &table, ExclusiveStartKey: start,
			FilterExpression: aws.String("#ttl < :now"), ExpressionAttributeNames: names, ExpressionAttributeValues: nowV,
			ProjectionExpression: aws.String(ddbsessions.PartitionKey + ", " + ddbsessions.SortKey), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return deleted, fmt.Errorf("ddbttl: scan %s: %w", table, err)
		}
		for _, it := range out.Items {
			_, err := api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: it,
				ConditionExpression: aws.String("#ttl < :now"), ExpressionAttributeNames: names, ExpressionAttributeValues: nowV})
			var cf *types.ConditionalCheckFailedException
			switch {
			case err == nil:
				deleted++
			case errors.As(err, &cf): // raised since the scan
			default:
				return deleted, fmt.Errorf("ddbttl: delete from %s: %w", table, err)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return deleted, nil
		}
		start = out.LastEvaluatedKey
	}
}

// Run sweeps table every Every until ctx ends, logging what each sweep
// deleted and any failure (the next sweep tries again).
func Run(ctx context.Context, api API, table string, log *slog.Logger) {
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			n, err := Sweep(ctx, api, table, now)
			switch {
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "ddbttl: sweep", "table", table, "deleted", n, "err", err)
			case n > 0:
				log.DebugContext(ctx, "ddbttl: expired items deleted", "table", table, "deleted", n)
			}
		}
	}
}
