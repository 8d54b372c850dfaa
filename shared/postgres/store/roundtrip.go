package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// chargedTracer is the pool's tracer with an emulated network round trip
// (Options.RoundTrip): each statement, each batch (one round trip
// however many statements it holds) and each COPY waits it before it is
// sent, as a function waits for Aurora across the network
// (shared/aws/awssdk/charges.go gives the figure and its source).
type chargedTracer struct {
	*statementCounter
	roundTrip time.Duration
}

func (c chargedTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	wait(ctx, c.roundTrip)
	return c.statementCounter.TraceQueryStart(ctx, conn, d)
}

func (c chargedTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	wait(ctx, c.roundTrip)
	return c.statementCounter.TraceBatchStart(ctx, conn, d)
}

func (c chargedTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	wait(ctx, c.roundTrip)
	return c.statementCounter.TraceCopyFromStart(ctx, conn, d)
}

// wait sleeps d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
