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

// CountMessage is one UpdateItem (ADD) of the window's counter.
func (st *Store) CountMessage(ctx context.Context, p session.CountParams) (int64, error) {
	connection, windowStart, window := p.Connection, p.WindowStart, p.Window
	out, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table,
		Key:                       key(ratePK(connection), strconv.FormatInt(windowStart, 10)),
		UpdateExpression:          aws.String("ADD #h :one SET #ttl = :exp"),
		ExpressionAttributeNames:  map[string]string{"#h": "hits", "#ttl": aTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": n(1), ":exp": n(windowStart + window)},
		ReturnValues:              types.ReturnValueUpdatedNew})
	if err != nil {
		return 0, errorf("count message of %s: %w", connection, err)
	}
	return num(out.Attributes, "hits"), nil
}
