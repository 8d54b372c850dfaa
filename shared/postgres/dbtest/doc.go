// Package dbtest is what only tests, the seed command and the benchmarks do
// with PostgreSQL: whole databases cloned from a migrated template
// (databases.go) and bulk loads with COPY in the exact shape the write path
// stores (bulk.go), on a DB of their own beside the store. No function
// binary links it, and like the store and migrate it may import pgx: both
// are checked by shared/postgres/store/door_test.go.
package dbtest
