// Package ddbsessions is the WebSocket sessions' store in DynamoDB
// (session.Store): one on-demand table of string keys pk and sk with a
// ttl attribute (infra/sessions.go declares it; localdev/ddb.sh creates
// it in dynalite), every read strongly consistent, the limits conditional
// writes, no scan. Its items:
//
//   - conn␟{id} / conn: a connection (community, relay URLs, challenge,
//     sent, pubkey, connected, expires) and subs, the set of its
//     subscription ids (the per-connection limit is a condition on its
//     size);
//   - conn␟{id} / sub␟{sub}: a subscription (community, pubkey, filters,
//     pins, pos: when it was stored, unix ns, the delivery cutoff's unit);
//   - aud␟{community}␟{pin} / {conn}␟{sub}: an audience entry per pin of a
//     subscription ("" is the any-channel bucket), carrying what delivery
//     reads: a channel's audience is one Query, a part of it a key range;
//   - key␟{community}␟{pubkey} / key: the set of a key's subscriptions in
//     a community ({conn}␟{sub}), the per-key limit's condition;
//   - mark␟{community} / mark: the community's last-commit mark (mark)
//     and last-write stamp (wrote);
//   - res␟{community}␟{pubkey} / {sub}␟{shape}: a resume record
//     (session.Resume: since, limit, wrote, at, newest, expires);
//   - rate␟{conn} / {window start}: the connection's message counter
//     of one window (hits);
//   - open / {conn}: the open connections the liveness tick posts to.
//
// ␟ is the unit separator \x1f. Connection ids carry no byte at or below
// a space (API Gateway's are base64). Items expire by ttl (DynamoDB
// deletes them within days; every read skips what expired).
package ddbsessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/domain/session"
)

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// Store is session.Store in table. Safe for concurrent use.
type Store struct {
	api   API
	table string
	now   func() time.Time
	reads sharedReads // the audience Queries (AudienceRange)
	// keySets are the key sets' expiries this instance last saw: a REQ
	// whose connection its key's set already outlives raises nothing (a
	// forgotten set's next REQ raises it again, a write the set may not
	// need).
	keySets session.Highest
	// keyLoads decide whether a subscribe takes its key's set alongside
	// its connection's or after it (keyload.go).
	keyLoads keyLoads
}

var _ session.Store = (*Store)(nil)

// New is the store in table through api.
func New(api API, table string) *Store {
	return &Store{api: api, table: table, now: time.Now, keySets: session.Highest{Cap: 10000}}
}

const sep = "\x1f"

// Key and attribute names.
const (
	aPK, aSK, aTTL = "pk", "sk", "ttl"
)

// The table's partition and sort keys and its Time to Live attribute
// (unix seconds), for what works on the table from outside the store
// (localdev's expiry of the local table).
const (
	PartitionKey, SortKey, TTLAttribute = aPK, aSK, aTTL
)

func connPK(id string) string               { return "conn" + sep + id }
func subSK(sub string) string               { return "sub" + sep + sub }
func audPK(community, pin string) string    { return "aud" + sep + community + sep + pin }
func audSK(conn, sub string) string         { return conn + sep + sub }
func keyPK(community, pubkey string) string { return "key" + sep + community + sep + pubkey }
func markPK(community string) string        { return "mark" + sep + community }
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{aPK: s(pk), aSK: s(sk)}
}

const (
	skConn = "conn"
	skKey  = "key"
	skMark = "mark"
	pkOpen = "open"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func ss(v ...string) types.AttributeValue {
	return &types.AttributeValueMemberSS{Value: v}
}
func list(v []string) types.AttributeValue {
	l := make([]types.AttributeValue, len(v))
	for i, x := range v {
		l[i] = s(x)
	}
	return &types.AttributeValueMemberL{Value: l}
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func num(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		x, _ := strconv.ParseInt(v.Value, 10, 64)
		return x
	}
	return 0
}

func strs(item map[string]types.AttributeValue, name string) []string {
	switch v := item[name].(type) {
	case *types.AttributeValueMemberSS:
		return v.Value
	case *types.AttributeValueMemberL:
		out := make([]string, 0, len(v.Value))
		for _, x := range v.Value {
			if e, ok := x.(*types.AttributeValueMemberS); ok {
				out = append(out, e.Value)
			}
		}
		return out
	}
	return nil
}

func conditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// failedItem is the item a conditional write found failing its
// condition: as the failure returned it, else (dynalite returns none)
// read again, strongly consistent (nil: there is none).
func (st *Store) failedItem(ctx context.Context, cf *types.ConditionalCheckFailedException, k map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	if cf.Item != nil {
		return cf.Item, nil
	}
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, errorf("read item after a failed condition: %w", err)
	}
	return out.Item, nil
}

func errorf(format string, args ...any) error { return fmt.Errorf("ddbsessions: "+format, args...) }

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

// tombPK and claimPK keep a connection's tombstones and claims apart from
// its items (connPK): a client's CLOSEs or a busy channel's claims never
// lengthen the Query that $disconnect runs, and TTL alone removes them.
func tombPK(connection string) string  { return "closed" + sep + connection }
func claimPK(connection string) string { return "claim" + sep + connection }

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

// Cutoff is the clock, unix ns: a subscription's position is the clock
// of the instance that stored it, read before it was stored. Exact on one
// clock; across instances it relies on their clocks agreeing (Lambda's
// are synchronized to Amazon Time Sync, within a millisecond), which a
// commit's delivery outlasts.
func (st *Store) Cutoff(context.Context) (int64, error) { return st.now().UnixNano(), nil }

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

// query runs in (table and consistency set here) through every page.
func (st *Store) query(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	in.TableName, in.ConsistentRead = &st.table, aws.Bool(true)
	var out []map[string]types.AttributeValue
	for {
		page, err := st.api.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// batchWrite writes ws, 25 at a time, until none is left unprocessed.
func (st *Store) batchWrite(ctx context.Context, ws []types.WriteRequest) error {
	for len(ws) > 0 {
		chunk := ws[:min(25, len(ws))]
		ws = ws[len(chunk):]
		for try := 0; len(chunk) > 0; try++ {
			out, err := st.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.table: chunk}})
			if err != nil {
				return errorf("batch write: %w", err)
			}
			chunk = out.UnprocessedItems[st.table]
			if len(chunk) > 0 {
				if try >= 8 {
					return errorf("batch write: %d items left unprocessed", len(chunk))
				}
				time.Sleep(time.Duration(10<<try) * time.Millisecond)
			}
		}
	}
	return nil
}

// batchGet reads keys, 100 at a time, strongly consistent.
func (st *Store) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for len(keys) > 0 {
		chunk := keys[:min(100, len(keys))]
		keys = keys[len(chunk):]
		for try := 0; len(chunk) > 0; try++ {
			res, err := st.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				st.table: {Keys: chunk, ConsistentRead: aws.Bool(true)}}})
			if err != nil {
				return nil, errorf("batch get: %w", err)
			}
			out = append(out, res.Responses[st.table]...)
			chunk = res.UnprocessedKeys[st.table].Keys
			if len(chunk) > 0 {
				if try >= 8 {
					return nil, errorf("batch get: %d keys left unprocessed", len(chunk))
				}
				time.Sleep(time.Duration(10<<try) * time.Millisecond)
			}
		}
	}
	return out, nil
}

// CreateTable creates an on-demand table of the store's key schema (as
// infra/sessions.go and localdev/ddb.sh declare it) and waits until it is
// active: tests make one each.
func CreateTable(ctx context.Context, api *dynamodb.Client, table string) error {
	_, err := api.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &table, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(aPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(aSK), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(aPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(aSK), KeyType: types.KeyTypeRange}}})
	if err != nil {
		return errorf("create table %s: %w", table, err)
	}
	err = dynamodb.NewTableExistsWaiter(api).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, time.Minute,
		func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay, o.MaxDelay = 10*time.Millisecond, 200*time.Millisecond
		})
	if err != nil {
		return errorf("table %s: %w", table, err)
	}
	return nil
}

// Client is a DynamoDB client built, as every AWS client of the relay,
// from awssdk.Load: the SDK's default chain (AWS_ENDPOINT_URL_DYNAMODB
// names a local server, which gets local credentials), and the emulated
// charges of APIGW_COSTS / DYNAMODB_LATENCY on each request.
func Client(ctx context.Context) (*dynamodb.Client, error) {
	cfg, err := awssdk.Load(ctx, "", os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"))
	if err != nil {
		return nil, errorf("aws config: %w", err)
	}
	// Every session operation is one small request: the connections are
	// kept alive for as many at once as an instance sends (the SDK's
	// default keeps 10 idle, so a busier instance opened and closed a
	// connection per request past them).
	cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns, t.MaxIdleConnsPerHost = maxIdleConns, maxIdleConns
	})
	return dynamodb.NewFromConfig(cfg), nil
}

// maxIdleConns is how many connections to DynamoDB a client keeps open
// while idle: about the requests an instance has in flight at its busiest
// (a WebSocket message invocation sends a few at once).
const maxIdleConns = 256
