package ddbsessions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// SubscriptionsByKey reads the named subscriptions.
func (st *Store) SubscriptionsByKey(ctx context.Context, community string, keys [][2]string, now int64) ([]session.Subscription, error) {
	ks := make([]map[string]types.AttributeValue, 0, len(keys))
	seen := map[[2]string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			ks = append(ks, key(connPK(k[0]), subSK(k[1])))
		}
	}
	items, err := st.batchGet(ctx, ks)
	if err != nil {
		return nil, err
	}
	var out []session.Subscription
	for _, it := range items {
		if str(it, "community") != community || num(it, "expires") <= now {
			continue
		}
		out = append(out, subscriptionOf(it, strings.TrimPrefix(str(it, aPK), "conn"+sep), strings.TrimPrefix(str(it, aSK), "sub"+sep)))
	}
	return out, nil
}

func pinsOf(channels []string) []string {
	pins := []string{""}
	for _, c := range channels {
		if c != "" && !slices.Contains(pins, c) {
			pins = append(pins, c)
		}
	}
	return pins
}

// AudienceBounds reads the audience's connection ids (keys only).
func (st *Store) AudienceBounds(ctx context.Context, community string, channels []string, per int) ([]string, error) {
	per = max(per, 1)
	set := map[string]bool{}
	for _, pin := range pinsOf(channels) {
		items, err := st.query(ctx, &dynamodb.QueryInput{KeyConditionExpression: aws.String("pk = :pk"),
			ProjectionExpression:      aws.String("sk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(audPK(community, pin))}})
		if err != nil {
			return nil, errorf("audience bounds: %w", err)
		}
		for _, it := range items {
			c, _, _ := strings.Cut(str(it, aSK), sep)
			set[c] = true
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(set))
	for c := range set {
		ids = append(ids, c)
	}
	slices.Sort(ids)
	var bounds []string
	for i, c := range ids {
		if (i+1)%per == 0 || i == len(ids)-1 {
			bounds = append(bounds, c)
		}
	}
	return bounds, nil
}

// AudienceRange reads the entries of each pin in (after, through], the
// pins at once, each through the instance's shared reads (audienceReads):
// commits delivered together cost one Query per pin, not one each.
func (st *Store) AudienceRange(ctx context.Context, p session.AudienceRangeParams) ([]session.Subscription, error) {
	community, channels, cutoff, after, through, now := p.Community, p.Channels, p.Cutoff, p.After, p.Through, p.Now
	pins := pinsOf(channels)
	pages := make([][]map[string]types.AttributeValue, len(pins))
	errs := make([]error, len(pins))
	var wg sync.WaitGroup
	for i, pin := range pins {
		wg.Go(func() {
			pages[i], errs[i] = st.reads.do(ctx, audPK(community, pin)+sep+after+sep+through, func(ctx context.Context) ([]map[string]types.AttributeValue, error) {
				return st.query(ctx, &dynamodb.QueryInput{
					KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :lo AND :hi"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(audPK(community, pin)),
						":lo": s(after + "\x20"), ":hi": s(through + "\x20")}})
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errorf("audience range (%q, %q]: %w", after, through, err)
	}
	seen := map[[2]string]bool{}
	var out []session.Subscription
	for _, items := range pages {
		for _, it := range items {
			k := [2]string{str(it, "connection"), str(it, "sub")}
			if seen[k] || num(it, "pos") > cutoff || num(it, "expires") <= now {
				continue
			}
			seen[k] = true
			out = append(out, subscriptionOf(it, k[0], k[1]))
		}
	}
	return out, nil
}

// subscriptionOf is the subscription sub of connection an item or an
// audience entry holds.
func subscriptionOf(it map[string]types.AttributeValue, connection, sub string) session.Subscription {
	return session.Subscription{Connection: connection, Sub: sub, Pubkey: str(it, "pubkey"), Filters: str(it, "filters"),
		ClaimsUntil: num(it, "claims")}
}

// Cutoff is the clock, unix ns: a subscription's position is the clock
// of the instance that stored it, read before it was stored. Exact on one
// clock; across instances it relies on their clocks agreeing (Lambda's
// are synchronized to Amazon Time Sync, within a millisecond), which a
// commit's delivery outlasts.
func (st *Store) Cutoff(context.Context) (int64, error) { return st.now().UnixNano(), nil }
