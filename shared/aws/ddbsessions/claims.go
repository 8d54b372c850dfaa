package ddbsessions

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// Claim records that event goes to subscription sub of connection, once:
// an item kept until past until (claimPK).
func (st *Store) Claim(ctx context.Context, p session.ClaimParams) (bool, error) {
	connection, sub, event, until := p.Connection, p.Sub, p.Event, p.Until
	item := key(claimPK(connection), sub+sep+event)
	item[aTTL] = n(until + claimSlack)
	_, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	switch {
	case err == nil:
		return true, nil
	case conditionFailed(err):
		return false, nil
	}
	return false, errorf("claim %s for %s: %w", event, sub, err)
}

// claimSlack keeps a claim past its subscription's claiming window, for a
// claimer whose clock runs behind.
const claimSlack = 60

// claimPK keeps a connection's claims apart from its items (connPK): a
// busy channel's claims never lengthen the Query that $disconnect runs,
// and TTL alone removes them.
func claimPK(connection string) string { return "claim" + sep + connection }
