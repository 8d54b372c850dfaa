package bridge

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/guard"
	"github.com/buzzrelay/relay/shared/service/workflow"
)

// Buzz's workflow routes (shared/service/workflow): the webhook door and
// the runs and approvals the desktop app reads.

// Hook is POST /hooks/{id}: a webhook workflow's run, started by its
// secret (X-Webhook-Secret, or ?secret=); 202 with the run's id.
func (b *Bridge) Hook(ctx context.Context, r Request, id string) Response {
	if b.Workflows == nil {
		return b.NoRoute(ctx, r)
	}
	if len(r.Body) > maxHookBody {
		return b.Fail(ctx, "hook", because(errTooLarge, reject.Invalidf("request body is larger than %d bytes", maxHookBody)))
	}
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		return b.Fail(ctx, "hook", unresolved(err))
	}
	secret := r.Headers["x-webhook-secret"]
	if secret == "" {
		secret = r.Query["secret"]
	}
	run, err := b.Workflows.Hook(ctx, c.ID, id, secret, r.Body)
	if err != nil {
		return b.Fail(ctx, "hook", err)
	}
	return JSON(http.StatusAccepted, map[string]string{"run_id": run})
}

// maxHookBody bounds a webhook's body (its fields become trigger
// variables).
const maxHookBody = 64 << 10

// Workflow is GET /workflows/{id}/runs and
// GET /workflows/{id}/runs/{run}/approvals (NIP-98), for the members of
// the workflow's channel.
func (b *Bridge) Workflow(ctx context.Context, r Request, rest string) Response {
	if b.Workflows == nil {
		return b.NoRoute(ctx, r)
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2 && parts[1] == "runs":
		return b.workflowRuns(ctx, r, parts[0])
	case len(parts) == 4 && parts[1] == "runs" && parts[3] == "approvals":
		return b.runApprovals(ctx, r, parts[0], parts[2])
	}
	return b.NoRoute(ctx, r)
}

func (b *Bridge) workflowRuns(ctx context.Context, r Request, id string) Response {
	var q workflow.RunsQuery
	_, hasBefore := r.Query["before"]
	_, hasBeforeID := r.Query["before_id"]
	if hasBefore {
		n, err := strconv.ParseInt(r.Query["before"], 10, 64)
		if err != nil {
			t, terr := time.Parse(time.RFC3339, r.Query["before"])
			if terr != nil {
				return b.Fail(ctx, "workflow runs", reject.Invalidf("before must be a unix time or an RFC 3339 time"))
			}
			n = t.Unix()
		}
		q.Before, q.BeforeID = n, r.Query["before_id"]
	}
	if l, ok := r.Query["limit"]; ok {
		n, err := strconv.Atoi(l)
		if err != nil || n == 0 {
			return b.Fail(ctx, "workflow runs", reject.Invalidf("limit must be between 1 and 100"))
		}
		q.Limit = n
	}
	if err := workflow.CheckRunsQuery(&q, hasBefore, hasBeforeID); err != nil {
		return b.Fail(ctx, "workflow runs", err)
	}
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "workflow runs", err)
	}
	page, err := b.Workflows.Runs(ctx, guard.Caller{Pubkey: pubkey}, c.ID, id, q)
	if err != nil {
		return b.Fail(ctx, "workflow runs", err)
	}
	return JSON(http.StatusOK, page)
}

func (b *Bridge) runApprovals(ctx context.Context, r Request, id, run string) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.Fail(ctx, "run approvals", err)
	}
	as, err := b.Workflows.Approvals(ctx, guard.Caller{Pubkey: pubkey}, c.ID, id, run)
	if err != nil {
		return b.Fail(ctx, "run approvals", err)
	}
	return JSON(http.StatusOK, map[string]any{"approvals": as})
}
