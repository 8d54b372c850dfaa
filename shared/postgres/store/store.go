package store

// The pool and the write transaction: Store, Open, Ping, Tx.

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store wraps the pool a cold start builds once.
type Store struct {
	pool  *pgxpool.Pool
	count *statementCounter
}

// Options tune the pool.
type Options struct {
	MaxConns int32
	// SimpleProtocol uses QueryExecModeExec: no server-side prepared
	// statements, safe behind PgBouncer/RDS Proxy in transaction mode.
	SimpleProtocol bool
	// ConnectTimeout bounds each connection attempt (0: the DSN's
	// connect_timeout, else none).
	ConnectTimeout time.Duration
	// IdleTimeout closes a connection unused this long (default 30 s). The
	// pool keeps no minimum, so an idle pool drops to zero connections.
	IdleTimeout time.Duration
	// BeforeConnect, when not nil, adjusts each new connection's settings
	// (the IAM auth token as password).
	BeforeConnect func(context.Context, *pgx.ConnConfig) error
	// RoundTrip, when above 0, is waited before each statement, batch or
	// COPY is sent: Aurora's network round trip, which loopback lacks
	// (the emulated costs, AURORA_ROUND_TRIP; roundtrip.go).
	RoundTrip time.Duration
}

// DefaultIdleTimeout is Options.IdleTimeout when unset.
const DefaultIdleTimeout = 30 * time.Second

// Open builds a pool; it connects lazily, so a cold start does not wait for
// an idle Aurora to resume.
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errorf("parse database url: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = o.IdleTimeout
	if cfg.MaxConnIdleTime <= 0 {
		cfg.MaxConnIdleTime = DefaultIdleTimeout
	}
	// The pool closes idle connections on its health check: run it often
	// enough that none outlives the idle time by much.
	cfg.HealthCheckPeriod = min(time.Minute, max(cfg.MaxConnIdleTime/2, 50*time.Millisecond))
	if o.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
		// A connection thawed with its Lambda may lead nowhere: its
		// liveness ping gets the same bound.
		cfg.PingTimeout = o.ConnectTimeout
	}
	if o.BeforeConnect != nil {
		cfg.BeforeConnect = o.BeforeConnect
	}
	if o.SimpleProtocol {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	count := &statementCounter{}
	cfg.ConnConfig.Tracer = count
	if o.RoundTrip > 0 {
		cfg.ConnConfig.Tracer = chargedTracer{statementCounter: count, roundTrip: o.RoundTrip}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, errorf("new pool: %w", err)
	}
	return &Store{pool: pool, count: count}, nil
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return errorf("ping: %w", err)
	}
	return nil
}

// Tx runs fn in one transaction scoped to community: committed when fn
// returns nil, rolled back otherwise (including on panic). BEGIN travels
// with the transaction's first statement, saving a round trip per write.
func (s *Store) Tx(ctx context.Context, community string, fn func(*Tx) error) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return errorf("acquire connection: %w", err)
	}
	// A connection released inside a transaction (a failed ROLLBACK) is
	// closed by the pool, never reused.
	defer conn.Release()
	tx := &lazyTx{conn: conn}
	defer func() {
		if p := recover(); p != nil {
			tx.rollback(ctx)
			panic(p)
		}
		if err != nil {
			tx.rollback(ctx)
		}
	}()
	if err = fn(&Tx{tx: tx, store: s, community: community}); err != nil {
		if cerr := tx.settle(ctx); cerr != nil {
			return interpret(cerr) // a deferred check's refusal comes first
		}
		return interpret(err)
	}
	if err = tx.commit(ctx); err != nil {
		return errorf("commit: %w", err)
	}
	return nil
}

// Tx is one write transaction of one community.
type Tx struct {
	tx        *lazyTx
	store     *Store
	community string
	// stored are the events this transaction stored, as delivery needs
	// them (a Delivery need not read them back).
	stored map[string]Delivered
	// system says, for the channels this transaction read, whether each
	// is a system channel.
	system map[string]bool
}

// Community is the community this transaction is scoped by.
func (t *Tx) Community() string { return t.community }
