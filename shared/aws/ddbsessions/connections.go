package ddbsessions

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// OpenConnection records c; its subscriptions (and their set) stay.
func (st *Store) OpenConnection(ctx context.Context, c session.Connection) error {
	upd := "SET community = :c, urls = :u, challenge = :ch, sent = :sent, connected = :at, expires = :exp, #ttl = :exp"
	vals := map[string]types.AttributeValue{":c": s(c.Community), ":u": list(c.RelayURLs), ":ch": s(c.Challenge),
		":sent": &types.AttributeValueMemberBOOL{Value: c.ChallengeSent}, ":at": n(c.ConnectedAt), ":exp": n(c.ExpiresAt)}
	if c.Pubkey != "" {
		upd += ", pubkey = :pk"
		vals[":pk"] = s(c.Pubkey)
	} else {
		upd += " REMOVE pubkey"
	}
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(c.ID), skConn),
		UpdateExpression: &upd, ExpressionAttributeNames: map[string]string{"#ttl": aTTL}, ExpressionAttributeValues: vals})
	if err != nil {
		return errorf("record connection %s: %w", c.ID, err)
	}
	return nil
}

func (st *Store) getConn(ctx context.Context, id string) (map[string]types.AttributeValue, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(connPK(id), skConn), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, errorf("load connection %s: %w", id, err)
	}
	return out.Item, nil
}

// Connection returns connection id if live at now.
func (st *Store) Connection(ctx context.Context, id string, now int64) (*session.Connection, error) {
	it, err := st.getConn(ctx, id)
	if err != nil {
		return nil, err
	}
	if it == nil || num(it, "expires") <= now {
		return nil, session.ErrUnknownConnection
	}
	sent, _ := it["sent"].(*types.AttributeValueMemberBOOL)
	return &session.Connection{ID: id, Community: str(it, "community"), RelayURLs: strs(it, "urls"),
		Challenge: str(it, "challenge"), ChallengeSent: sent != nil && sent.Value, Pubkey: str(it, "pubkey"),
		ConnectedAt: num(it, "connected"), ExpiresAt: num(it, "expires")}, nil
}

// MarkChallengeSent sets sent once.
func (st *Store) MarkChallengeSent(ctx context.Context, id string) (bool, error) {
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(id), skConn),
		UpdateExpression:          aws.String("SET sent = :t"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND sent = :f"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}, ":f": &types.AttributeValueMemberBOOL{Value: false}}})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, errorf("mark challenge sent: %w", err)
	}
	return true, nil
}

// Authenticate records pubkey on an existing connection.
func (st *Store) Authenticate(ctx context.Context, id, pubkey string) error {
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(id), skConn),
		UpdateExpression: aws.String("SET pubkey = :pk"), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pubkey)}})
	if conditionFailed(err) {
		return session.ErrUnknownConnection
	}
	if err != nil {
		return errorf("authenticate connection: %w", err)
	}
	return nil
}

// CloseConnection deletes the connection's partition (the connection and
// its subscriptions), their entries elsewhere and its open entry.
func (st *Store) CloseConnection(ctx context.Context, id string) error {
	items, err := st.query(ctx, &dynamodb.QueryInput{KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(connPK(id))}})
	if err != nil {
		return errorf("close %s: %w", id, err)
	}
	writes := []types.WriteRequest{{DeleteRequest: &types.DeleteRequest{Key: key(pkOpen, id)}}}
	for _, it := range items {
		sk := str(it, aSK)
		if sub, ok := strings.CutPrefix(sk, "sub"+sep); ok {
			if err := st.unindex(ctx, id, sub, it, false); err != nil {
				return err
			}
		}
		writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(connPK(id), sk)}})
	}
	return st.batchWrite(ctx, writes)
}

// Opened puts the open entry.
func (st *Store) Opened(ctx context.Context, id string, expires int64) error {
	it := key(pkOpen, id)
	it["expires"], it[aTTL] = n(expires), n(expires)
	if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: it}); err != nil {
		return errorf("record %s open: %w", id, err)
	}
	return nil
}

// OpenConnections queries the open entries.
func (st *Store) OpenConnections(ctx context.Context, now int64) ([]string, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pkOpen)}})
	if err != nil {
		return nil, errorf("list open connections: %w", err)
	}
	var ids []string
	for _, it := range items {
		if num(it, "expires") > now {
			ids = append(ids, str(it, aSK))
		}
	}
	return ids, nil
}

// ForgetOpen deletes the open entry.
func (st *Store) ForgetOpen(ctx context.Context, id string) error {
	if _, err := st.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &st.table, Key: key(pkOpen, id)}); err != nil {
		return errorf("forget open %s: %w", id, err)
	}
	return nil
}
