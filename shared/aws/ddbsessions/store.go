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
//
// Its files, by noun:
//
//   - store.go: the table (keys, attribute codecs, paged Query, batched
//     writes and reads, CreateTable, Client);
//   - connections.go: a connection's item, its challenge and key, its
//     open entry, and its end ($disconnect);
//   - subscriptions.go: a subscription stored under both limits (the
//     connection's and the key's sets), replaced, withdrawn, closed (with
//     its tombstone) and ended;
//   - audience.go: what delivery reads (a channel's audience entries, by
//     range and bounds; subscriptions by key; the cutoff clock), with
//     shared.go's shared reads;
//   - claims.go: a delivery's once-only claim per subscription and event;
//   - counters.go: the community's last-commit mark and last-write stamp,
//     and a connection's message counter per window (messages.go: the
//     counts that come while its write is in flight, added by the next);
//   - resumes.go: a subscription's resume record.
package ddbsessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
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
	// messages gathers the message counts of a counter that come while
	// its write is in flight (messages.go).
	messages messageCounts
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
