// Package sessionstest runs the conformance suite of session.Store
// against its implementation: DynamoDB (a fresh table of the local
// dynalite, AWS_ENDPOINT_URL_DYNAMODB: localdev/ddb.sh; a test fails,
// saying so, when it is not set).
package sessionstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/buzzrelay/relay/shared/aws/ddbsessions"
	"github.com/buzzrelay/relay/shared/domain/session"
)

// Impl is one implementation under test: Store, and Community, which
// makes a community exist where the store needs it.
type Impl struct {
	Name      string
	Store     session.Store
	Community func(t testing.TB, id string)
	// API and Table are DynamoDB's client and table (dynamodb only): a
	// test may build its own store over them.
	API   ddbsessions.API
	Table string
}

// Each runs f once per implementation, as a subtest named after it.
func Each(t *testing.T, f func(t *testing.T, im Impl)) {
	t.Run("dynamodb", func(t *testing.T) { f(t, DynamoDB(t)) })
}

// DynamoDB is the DynamoDB implementation over a fresh table of the local
// server; without one (AWS_ENDPOINT_URL_DYNAMODB unset) the test fails, as
// one without Postgres does: a missing server must not pass as a skip.
func DynamoDB(t testing.TB) Impl {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB is not set: run the tests with `make test`, which starts the local DynamoDB (localdev/ddb.sh)")
	}
	ctx := context.Background()
	c, err := ddbsessions.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	table := "test-" + hex.EncodeToString(b)
	if err := ddbsessions.CreateTable(ctx, c, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })
	return Impl{Name: "dynamodb", Store: ddbsessions.New(c, table), Community: func(testing.TB, string) {}, API: c, Table: table}
}
