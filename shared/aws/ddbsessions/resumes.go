package ddbsessions

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/domain/session"
)

func resumePK(community, pubkey string) string { return "res" + sep + community + sep + pubkey }
func resumeSK(sub, shape string) string        { return sub + sep + shape }

// SaveResume is one PutItem.
func (st *Store) SaveResume(ctx context.Context, r session.Resume) error {
	it := key(resumePK(r.Community, r.Pubkey), resumeSK(r.Sub, r.Shape))
	it["since"], it["limit"] = nums(r.Since), nums(r.Limit)
	it["wrote"], it["at"], it["expires"], it[aTTL] = n(r.Wrote), n(r.At), n(r.ExpiresAt), n(r.ExpiresAt)
	it["newest"] = n(r.Newest)
	if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: it}); err != nil {
		return errorf("save resume of %s: %w", r.Sub, err)
	}
	return nil
}

// Resume is one strongly consistent GetItem.
func (st *Store) Resume(ctx context.Context, p session.ResumeParams) (*session.Resume, error) {
	community, pubkey, sub, shape, now := p.Community, p.Pubkey, p.Sub, p.Shape, p.Now
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table,
		Key: key(resumePK(community, pubkey), resumeSK(sub, shape)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, errorf("read resume of %s: %w", sub, err)
	}
	if out.Item == nil || num(out.Item, "expires") <= now {
		return nil, nil
	}
	return &session.Resume{Community: community, Pubkey: pubkey, Sub: sub, Shape: shape,
		Since: numList(out.Item, "since"), Limit: numList(out.Item, "limit"),
		Wrote: num(out.Item, "wrote"), At: num(out.Item, "at"), ExpiresAt: num(out.Item, "expires"), Newest: num(out.Item, "newest")}, nil
}

func nums(v []int64) types.AttributeValue {
	l := make([]types.AttributeValue, len(v))
	for i, x := range v {
		l[i] = n(x)
	}
	return &types.AttributeValueMemberL{Value: l}
}

func numList(item map[string]types.AttributeValue, name string) []int64 {
	l, ok := item[name].(*types.AttributeValueMemberL)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(l.Value))
	for _, v := range l.Value {
		if x, ok := v.(*types.AttributeValueMemberN); ok {
			i, _ := strconv.ParseInt(x.Value, 10, 64)
			out = append(out, i)
		}
	}
	return out
}
