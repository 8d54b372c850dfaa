package ddbsessions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// Subscribe stores s under lim: the connection's set of ids and the key's
// set take it (each conditionally on its size), at once while the key's
// set is known here to be far from its limit, else the connection's first
// (keyload.go: so a burst is refused exactly at its limits). When the caller
// knows the connection's expiry (NewSubscription.Expires), the
// subscription item and its audience entries are written alongside them,
// one round trip in all, and taken back if a set refuses; otherwise they
// are written once the connection's set answered, a second round trip. A
// refusal by one set withdraws the id it added to the other (an id that
// was there before stays: a replaced subscription); the connection's
// refusal is the one reported when both refuse.
// It reports, once sub is stored, how many subscriptions its connection's
// and its key's sets held with it (0 for a set without a limit).
func (st *Store) Subscribe(ctx context.Context, sub session.NewSubscription, lim session.Limits) (held session.Held, err error) {
	pos := st.now().UnixNano()
	now := st.now().Unix()
	var (
		keyTTL     int64
		keyHad     bool
		kerr, werr error
		old        map[string]types.AttributeValue
		wg         sync.WaitGroup
	)
	kid := keyPK(sub.Community, sub.Pubkey)
	// The key's set alongside the connection's only while it is far from
	// its limit, else after it (keyload.go).
	alongside := lim.PerKey > 0 && (st.keyLoads.begin(kid, lim.PerKey, st.now()))
	if alongside {
		wg.Go(func() { keyTTL, keyHad, held.Key, kerr = st.takeKey(ctx, sub, lim.PerKey, now) })
	}
	early, asked := sub.Expires > now, sub.Expires
	var raised bool
	var rerr error
	if early {
		wg.Go(func() { old, werr = st.putSubscription(ctx, sub, pos, sub.Expires) })
		if known := st.keySets.Get(kid); lim.PerKey > 0 && known > 0 && known < sub.Expires {
			// The key's set, as last seen here, ends before this
			// connection: raised alongside (before or after the set takes
			// the entry, its expiry ends at least this connection's). A
			// set not seen here is most often new, its expiry then the
			// connection's: raised after the round, if need be.
			raised = true
			wg.Go(func() { rerr = st.keyExpiry(ctx, sub, sub.Expires) })
		}
	}
	out, cerr := st.takeConnection(ctx, sub, lim.PerConnection, now)
	keyTaken := alongside
	if lim.PerKey > 0 && !alongside && cerr == nil {
		keyTTL, keyHad, held.Key, kerr = st.takeKey(ctx, sub, lim.PerKey, now)
		keyTaken = true
	}
	wg.Wait()
	if lim.PerKey > 0 {
		learnt := held.Key
		if errors.Is(kerr, session.ErrKeyFull) {
			learnt = lim.PerKey
		}
		st.keyLoads.end(kid, learnt, st.now())
	}
	if err := st.withdraw(ctx, sub, lim, out, cerr, kerr, keyTaken && !keyHad); err != nil {
		if early {
			// Taken back: what the early write replaced, or, when it
			// failed part way, whatever it left.
			var uerr error
			if werr == nil {
				uerr = st.unput(ctx, sub, old)
			} else {
				uerr = st.Withdraw(ctx, sub)
			}
			if uerr != nil {
				return held, errors.Join(err, uerr)
			}
		}
		return held, err
	}
	// Both sets took the id: from here a failure ends it wholly (Withdraw),
	// as the error its REQ is answered with says.
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Withdraw(ctx, sub))
		}
	}()
	if expires := num(out.Attributes, "expires"); !early || expires != sub.Expires {
		// Written with the expiry the connection has (a connection
		// re-opened since the caller read it has another).
		var again map[string]types.AttributeValue
		again, werr = st.putSubscription(ctx, sub, pos, expires)
		if !early {
			old = again
		}
		sub.Expires = expires
	}
	if err := errors.Join(werr, rerr); err != nil {
		return held, err
	}
	// The key's set lives as long as its latest connection: its expiry is
	// raised when this connection outlives it (a REQ of a connection the
	// set already covers, the common case, needs no write).
	if lim.PerKey > 0 {
		if raised {
			keyTTL = max(keyTTL, asked)
		}
		if keyTTL < sub.Expires {
			if err := st.keyExpiry(ctx, sub, sub.Expires); err != nil {
				return held, err
			}
			keyTTL = sub.Expires
		}
		st.keySets.Saw(kid, keyTTL)
	}
	// A replaced subscription's entries of pins it no longer has.
	var stale []types.WriteRequest
	if old != nil {
		oc := str(old, "community")
		for _, pin := range strs(old, "pins") {
			if oc != sub.Community || !slices.Contains(sub.Pins, pin) {
				stale = append(stale, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(audPK(oc, pin), audSK(sub.Connection, sub.Sub))}})
			}
		}
	}
	ids := strs(out.Attributes, "subs")
	_, held.Connection = heldWith(ids, sub.Sub)
	if !slices.Contains(ids, sub.Sub) {
		ids = append(ids, sub.Sub)
	}
	held.Subs = ids
	return held, st.batchWrite(ctx, stale)
}

// heldWith reads a set as it was before entry was added to it (old):
// whether entry was in it, and how many it holds with entry.
func heldWith(old []string, entry string) (had bool, held int) {
	had = slices.Contains(old, entry)
	held = len(old)
	if !had {
		held++
	}
	return had, held
}

// Withdraw ends subscription sub wholly, whatever another call removed
// already: after a failure while storing it, or for an early answer
// whose CLOSE came while its store landed (Store.CloseSubscription). It removes
// the item (this attempt's or the one it was to replace) with its
// entries, this attempt's entries, and the id in both sets. A replaced
// subscription ends too: its REQ is answered with an error, or was
// closed, which ends the id for the client.
func (st *Store) Withdraw(ctx context.Context, sub session.NewSubscription) error {
	out, err := st.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &st.table, Key: key(connPK(sub.Connection), subSK(sub.Sub)),
		ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return errorf("withdraw %s: %w", sub.Sub, err)
	}
	// What sub stored and what the item held, if another store of the
	// id replaced it since (its pins), removed in one pass.
	item := subscriptionItem(sub, 0, 0)
	var other error
	switch old := out.Attributes; {
	case old == nil:
	case str(old, "community") == sub.Community && str(old, "pubkey") == sub.Pubkey:
		pins := slices.Clone(sub.Pins)
		for _, pin := range strs(old, "pins") {
			if !slices.Contains(pins, pin) {
				pins = append(pins, pin)
			}
		}
		item["pins"] = list(pins)
	default:
		other = st.unindex(ctx, sub.Connection, sub.Sub, old, false)
	}
	if err := errors.Join(other, st.unindex(ctx, sub.Connection, sub.Sub, item, true)); err != nil {
		return errorf("withdraw %s: %w", sub.Sub, err)
	}
	return nil
}

// withdraw decides Subscribe's limits from the connection's set's answer
// (out, cerr) and the key's (kerr; keyAdded: the key's set was asked and
// the entry was not there before): nil when both took the id, else the
// refusal or failure to report, with the id taken back from the set that
// took it anew.
func (st *Store) withdraw(ctx context.Context, sub session.NewSubscription, lim session.Limits, out *dynamodb.UpdateItemOutput, cerr, kerr error, keyAdded bool) error {
	if cerr != nil {
		if lim.PerKey > 0 && kerr == nil && keyAdded {
			if _, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(keyPK(sub.Community, sub.Pubkey), skKey),
				UpdateExpression:          aws.String("DELETE subs :s"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": ss(audSK(sub.Connection, sub.Sub))}}); err != nil {
				return errorf("withdraw %s from its key's set: %w", sub.Sub, err)
			}
		}
		return cerr
	}
	if kerr != nil {
		if errors.Is(kerr, session.ErrKeyFull) && !slices.Contains(strs(out.Attributes, "subs"), sub.Sub) {
			// Withdrawn from the connection's set (a replaced id was
			// there before: it stays).
			if _, uerr := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(sub.Connection), skConn),
				UpdateExpression:          aws.String("DELETE subs :s"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": ss(sub.Sub)}}); uerr != nil {
				return errorf("withdraw %s: %w", sub.Sub, uerr)
			}
		}
		return kerr
	}
	return nil
}

// subscriptionItem is sub's item at position pos, expiring at expires.
func subscriptionItem(sub session.NewSubscription, pos, expires int64) map[string]types.AttributeValue {
	item := key(connPK(sub.Connection), subSK(sub.Sub))
	item["community"], item["pubkey"], item["filters"] = s(sub.Community), s(sub.Pubkey), s(sub.Filters)
	item["pins"], item["created"], item["pos"] = list(sub.Pins), n(sub.CreatedAt), n(pos)
	item["expires"], item[aTTL] = n(expires), n(expires)
	if sub.ClaimsUntil > 0 {
		item["claims"] = n(sub.ClaimsUntil)
	}
	return item
}

// entriesOf are the audience entries of a subscription item: one per pin,
// what delivery reads (AudienceRange).
func entriesOf(item map[string]types.AttributeValue) []types.WriteRequest {
	conn := strings.TrimPrefix(str(item, aPK), "conn"+sep)
	sub := strings.TrimPrefix(str(item, aSK), "sub"+sep)
	var writes []types.WriteRequest
	for _, pin := range strs(item, "pins") {
		e := key(audPK(str(item, "community"), pin), audSK(conn, sub))
		e["connection"], e["sub"], e["pubkey"], e["filters"] = s(conn), s(sub), item["pubkey"], item["filters"]
		e["pos"], e["expires"], e[aTTL] = item["pos"], item["expires"], item["expires"]
		if c, ok := item["claims"]; ok {
			e["claims"] = c
		}
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: e}})
	}
	return writes
}

// putSubscription writes sub's item and its audience entries at once (one
// round trip: delivery reads only the entries; the item is what ends
// them) and returns the item it replaced (nil: none).
func (st *Store) putSubscription(ctx context.Context, sub session.NewSubscription, pos, expires int64) (map[string]types.AttributeValue, error) {
	item := subscriptionItem(sub, pos, expires)
	var (
		old  *dynamodb.PutItemOutput
		perr error
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		old, perr = st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: item, ReturnValues: types.ReturnValueAllOld})
	})
	berr := st.batchWrite(ctx, entriesOf(item))
	wg.Wait()
	if perr != nil {
		return nil, errorf("store subscription %s: %w", sub.Sub, perr)
	}
	if berr != nil {
		return nil, berr
	}
	return old.Attributes, nil
}

// unput takes back what putSubscription wrote for a refused sub: the item
// it replaced (old) and that item's entries put back, or, when it replaced
// none, the item and its entries deleted.
func (st *Store) unput(ctx context.Context, sub session.NewSubscription, old map[string]types.AttributeValue) error {
	if old != nil {
		if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: old}); err != nil {
			return errorf("put back subscription %s: %w", sub.Sub, err)
		}
	}
	writes := []types.WriteRequest{}
	if old == nil {
		writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(connPK(sub.Connection), subSK(sub.Sub))}})
	}
	for _, pin := range sub.Pins {
		if old == nil || str(old, "community") != sub.Community || !slices.Contains(strs(old, "pins"), pin) {
			writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(audPK(sub.Community, pin), audSK(sub.Connection, sub.Sub))}})
		}
	}
	if old != nil {
		writes = append(writes, entriesOf(old)...)
	}
	return st.batchWrite(ctx, writes)
}

// takeConnection adds sub's id to its connection's set under
// perConnection (0: no limit) and returns the connection as it was.
func (st *Store) takeConnection(ctx context.Context, sub session.NewSubscription, perConnection int, now int64) (*dynamodb.UpdateItemOutput, error) {
	cond := "attribute_exists(pk) AND expires > :now"
	vals := map[string]types.AttributeValue{":s": ss(sub.Sub), ":sub": s(sub.Sub), ":now": n(now)}
	if perConnection > 0 {
		cond += " AND (attribute_not_exists(subs) OR size(subs) < :max OR contains(subs, :sub))"
		vals[":max"] = n(int64(perConnection))
	}
	out, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(sub.Connection), skConn),
		UpdateExpression: aws.String("ADD subs :s"), ConditionExpression: &cond, ExpressionAttributeValues: vals,
		ReturnValues: types.ReturnValueAllOld, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if err == nil {
		return out, nil
	}
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return nil, errorf("subscribe %s: %w", sub.Sub, err)
	}
	it, err := st.failedItem(ctx, cf, key(connPK(sub.Connection), skConn))
	if err != nil {
		return nil, err
	}
	if it == nil || num(it, "expires") <= now {
		return nil, session.ErrUnknownConnection
	}
	return nil, session.ErrConnectionFull
}

// takeKey adds sub to its key's set under perKey and returns the set's
// expiry and whether the entry was there before. A new set expires when
// a connection opened now would (session.Lifetime): no later than any
// connection of the key's, whose own expiry Subscribe then raises it to
// (keyExpiry) when it is later. A set found full is checked once for
// entries of connections that are gone (expired without their
// $disconnect): those are dropped and the add tried again.
func (st *Store) takeKey(ctx context.Context, sub session.NewSubscription, perKey int, now int64) (ttl int64, had bool, held int, err error) {
	entry := audSK(sub.Connection, sub.Sub)
	k := key(keyPK(sub.Community, sub.Pubkey), skKey)
	fresh := now + int64(session.Lifetime/time.Second)
	for attempt := 0; ; attempt++ {
		out, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: k,
			UpdateExpression:                    aws.String("ADD subs :s SET #ttl = if_not_exists(#ttl, :exp)"),
			ConditionExpression:                 aws.String("attribute_not_exists(subs) OR size(subs) < :max OR contains(subs, :e)"),
			ExpressionAttributeNames:            map[string]string{"#ttl": aTTL},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":s": ss(entry), ":e": s(entry), ":max": n(int64(perKey)), ":exp": n(fresh)},
			ReturnValues:                        types.ReturnValueAllOld,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		if err == nil {
			ttl := fresh
			if _, ok := out.Attributes[aTTL]; ok {
				ttl = num(out.Attributes, aTTL)
			}
			had, held := heldWith(strs(out.Attributes, "subs"), entry)
			return ttl, had, held, nil
		}
		var cf *types.ConditionalCheckFailedException
		if !errors.As(err, &cf) {
			return 0, false, 0, errorf("key set: %w", err)
		}
		if attempt > 0 {
			return 0, false, 0, session.ErrKeyFull
		}
		it, err := st.failedItem(ctx, cf, k)
		if err != nil {
			return 0, false, 0, err
		}
		dead, err := st.deadEntries(ctx, strs(it, "subs"), now)
		if err != nil {
			return 0, false, 0, err
		}
		if len(dead) == 0 {
			return 0, false, 0, session.ErrKeyFull
		}
		if _, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: k,
			UpdateExpression: aws.String("DELETE subs :d"), ExpressionAttributeValues: map[string]types.AttributeValue{":d": ss(dead...)}}); err != nil {
			return 0, false, 0, errorf("drop gone entries of key set: %w", err)
		}
	}
}

// keyExpiry raises the expiry of sub's key's set to expires.
func (st *Store) keyExpiry(ctx context.Context, sub session.NewSubscription, expires int64) error {
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(keyPK(sub.Community, sub.Pubkey), skKey),
		UpdateExpression: aws.String("SET #ttl = :exp"), ConditionExpression: aws.String("#ttl < :exp"),
		ExpressionAttributeNames: map[string]string{"#ttl": aTTL}, ExpressionAttributeValues: map[string]types.AttributeValue{":exp": n(expires)}})
	if err != nil && !conditionFailed(err) {
		return errorf("key set expiry: %w", err)
	}
	return nil
}

// deadEntries are the entries ({conn}␟{sub}) whose connection is gone or
// expired at now.
func (st *Store) deadEntries(ctx context.Context, entries []string, now int64) ([]string, error) {
	conns := map[string][]string{}
	for _, e := range entries {
		c, _, _ := strings.Cut(e, sep)
		conns[c] = append(conns[c], e)
	}
	ids := make([]string, 0, len(conns))
	for c := range conns {
		ids = append(ids, c)
	}
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, c := range ids {
		keys[i] = key(connPK(c), skConn)
	}
	items, err := st.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, it := range items {
		if num(it, "expires") > now {
			live[strings.TrimPrefix(str(it, aPK), "conn"+sep)] = true
		}
	}
	var dead []string
	for c, es := range conns {
		if !live[c] {
			dead = append(dead, es...)
		}
	}
	return dead, nil
}

// EndSubscription deletes the subscription, its audience entries and its
// places in the connection's and the key's sets.
func (st *Store) EndSubscription(ctx context.Context, connection, sub string) (bool, error) {
	out, err := st.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &st.table, Key: key(connPK(connection), subSK(sub)),
		ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return false, errorf("end subscription: %w", err)
	}
	if out.Attributes == nil {
		return false, nil
	}
	return true, st.unindex(ctx, connection, sub, out.Attributes, true)
}

// CloseSubscription is EndSubscription for a client's CLOSE (or a REQ
// that ends the id): it first records when the id was closed, at (unix
// ns), in a tombstone (tombPK) kept for tombstoneTTL, then ends it. A REQ
// of the id answered before its store landed reads the tombstone once its
// store landed (ClosedAt) and withdraws what it stored (Withdraw):
// whichever of the two lands last removes it.
func (st *Store) CloseSubscription(ctx context.Context, connection, sub string, at int64) (bool, error) {
	item := key(tombPK(connection), sub)
	item["at"], item[aTTL] = n(at), n(st.now().Unix()+tombstoneTTL)
	if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.table, Item: item}); err != nil {
		return false, errorf("close %s: %w", sub, err)
	}
	return st.EndSubscription(ctx, connection, sub)
}

// tombstoneTTL is how long a CLOSE's tombstone is kept (seconds): past
// any store of the same id still landing.
const tombstoneTTL = 60

// tombPK keeps a connection's tombstones apart from its items (connPK),
// as claimPK keeps its claims: a client's CLOSEs never lengthen the Query
// that $disconnect runs, and TTL alone removes them.
func tombPK(connection string) string { return "closed" + sep + connection }

// ClosedAt is when subscription sub of connection was last closed (unix
// ns; 0: not within tombstoneTTL), read strongly consistent.
func (st *Store) ClosedAt(ctx context.Context, connection, sub string) (int64, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: key(tombPK(connection), sub),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, errorf("closed %s: %w", sub, err)
	}
	return num(out.Item, "at"), nil
}

// unindex removes what a deleted subscription item (old) left, all at
// once: its audience entries, its key set entry and, with fromConn, its
// id in the connection's set.
func (st *Store) unindex(ctx context.Context, connection, sub string, old map[string]types.AttributeValue, fromConn bool) error {
	community := str(old, "community")
	var writes []types.WriteRequest
	for _, pin := range strs(old, "pins") {
		writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(audPK(community, pin), audSK(connection, sub))}})
	}
	var (
		kerr, cerr error
		wg         sync.WaitGroup
	)
	if pk := str(old, "pubkey"); pk != "" {
		wg.Go(func() {
			if _, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(keyPK(community, pk), skKey),
				UpdateExpression: aws.String("DELETE subs :e"), ConditionExpression: aws.String("attribute_exists(pk)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":e": ss(audSK(connection, sub))}}); err != nil && !conditionFailed(err) {
				kerr = errorf("key set of %s: %w", sub, err)
			}
		})
	}
	if fromConn {
		wg.Go(func() {
			if _, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &st.table, Key: key(connPK(connection), skConn),
				UpdateExpression: aws.String("DELETE subs :s"), ConditionExpression: aws.String("attribute_exists(pk)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": ss(sub)}}); err != nil && !conditionFailed(err) {
				cerr = errorf("connection set of %s: %w", sub, err)
			}
		})
	}
	berr := st.batchWrite(ctx, writes)
	wg.Wait()
	return errors.Join(berr, kerr, cerr)
}
