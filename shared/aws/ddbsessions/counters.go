package ddbsessions

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// RaiseMark is one conditional UpdateItem.
func (st *Store) RaiseMark(ctx context.Context, community string, v int64, create bool) (int64, bool, error) {
	cond := "mark < :v"
	if create {
		cond = "attribute_not_exists(mark) OR mark < :v"
	}
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(markPK(community), skMark),
		UpdateExpression: aws.String("SET mark = :v"), ConditionExpression: &cond,
		ExpressionAttributeValues:           map[string]types.AttributeValue{":v": n(v)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if err == nil {
		return v, true, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return 0, false, errorf("raise mark of %s: %w", community, err)
	}
	it, err := st.failedItem(ctx, cf, key(markPK(community), skMark))
	if err != nil {
		return 0, false, err
	}
	if _, ok := it["mark"]; ok {
		return num(it, "mark"), true, nil
	}
	return 0, false, nil
}

// Mark is one strongly consistent GetItem.
func (st *Store) Mark(ctx context.Context, community string) (session.Mark, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(markPK(community), skMark), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return session.Mark{}, errorf("read mark of %s: %w", community, err)
	}
	_, exists := out.Item["mark"]
	return session.Mark{Value: num(out.Item, "mark"), Exists: exists, Wrote: num(out.Item, "wrote")}, nil
}

// Stamp is one conditional UpdateItem of the mark's item (attribute
// wrote).
func (st *Store) Stamp(ctx context.Context, community string, at int64) (int64, error) {
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(markPK(community), skMark),
		UpdateExpression:                    aws.String("SET #w = :w"),
		ConditionExpression:                 aws.String("attribute_not_exists(#w) OR #w < :w"),
		ExpressionAttributeNames:            map[string]string{"#w": "wrote"},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":w": n(at)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if err == nil {
		return at, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return 0, errorf("stamp %s: %w", community, err)
	}
	it, err := st.failedItem(ctx, cf, key(markPK(community), skMark))
	if err != nil {
		return 0, err
	}
	return num(it, "wrote"), nil
}

func ratePK(connection string) string { return "rate" + sep + connection }

// CountMessage adds one to the window's counter (an UpdateItem, ADD) and
// returns its total. The counts of one connection's window that come
// while its counter's write is in flight here are added together by the
// next write (ADD n: messages.go), each given its own total of the n, in
// the order they came: every message still has a place of its own in the
// window's count, as if counted alone, so a limit decided on it is as
// exact, and a burst on one instance costs a write per round trip, not
// one per message.
func (st *Store) CountMessage(ctx context.Context, p session.CountParams) (int64, error) {
	return st.messages.count(ctx, p.Connection+sep+strconv.FormatInt(p.WindowStart, 10), func(ctx context.Context, k int64) (int64, error) {
		return st.addMessages(ctx, p, k)
	})
}

// addMessages is one UpdateItem adding k to the window's counter; it
// returns the total.
func (st *Store) addMessages(ctx context.Context, p session.CountParams, k int64) (int64, error) {
	connection, windowStart, window := p.Connection, p.WindowStart, p.Window
	out, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table,
		Key:                       key(ratePK(connection), strconv.FormatInt(windowStart, 10)),
		UpdateExpression:          aws.String("ADD #h :k SET #ttl = :exp"),
		ExpressionAttributeNames:  map[string]string{"#h": "hits", "#ttl": aTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":k": n(k), ":exp": n(windowStart + window)},
		ReturnValues:              types.ReturnValueUpdatedNew})
	if err != nil {
		return 0, errorf("count message of %s: %w", connection, err)
	}
	return num(out.Attributes, "hits"), nil
}
