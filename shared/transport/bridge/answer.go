package bridge

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/gifs"
	"github.com/buzzrelay/relay/shared/service/manage"
)

// Refusals HTTP says more precisely than their NIP-01 prefix does.
var (
	errNoRoute  = errors.New("bridge: no such route")
	errTooLarge = errors.New("bridge: body too large")
	// errNoPolicy answers 404 where Buzz does: no join policy configured.
	errNoPolicy = errors.New("bridge: no join policy")
)

// statuses is the bridge's table of HTTP statuses that differ from what
// reject.Map gives an error's prefix: a refusal that wraps the sentinel
// gets the status.
var statuses = []struct {
	is     error
	status int
}{
	{errNoRoute, http.StatusNotFound},
	{community.ErrUnknownHost, http.StatusNotFound}, // never another community's data
	{errTooLarge, http.StatusRequestEntityTooLarge},
	{errNoPolicy, http.StatusNotFound},
	{manage.ErrNoSuchItem, http.StatusNotFound},  // the admin API's unknown (or another community's) id
	{manage.ErrReportState, http.StatusConflict}, // a report change its status forbids (Buzz's 409)
	{gifs.ErrUpstream, http.StatusBadGateway},    // the GIF provider failed
}

// Fail is the bridge's one mapping from an error to its answer: the HTTP
// status (reject.Map's, or the statuses table's), the JSON body
// {"error": NIP-01 prefixed text} and Retry-After, logged by
// reject.Report under op when the client is not told why.
func (b *Bridge) Fail(ctx context.Context, op string, err error) Response {
	a := reject.Report(ctx, b.Log, "bridge: "+op, err)
	if a.Class == reject.Refused {
		for _, s := range statuses {
			if errors.Is(err, s.is) {
				a.Status = s.status
				break
			}
		}
	}
	r := errorJSON(a.Status, a.Text)
	if a.RetryAfter > 0 {
		r.Headers["retry-after"] = strconv.Itoa(a.RetryAfter)
	}
	return r
}

// kinded is a refusal that is also of a kind the statuses table knows.
type kinded struct {
	kind error
	r    *reject.Error
}

func (k *kinded) Error() string   { return k.r.Error() }
func (k *kinded) Unwrap() []error { return []error{k.r, k.kind} }

// because is refusal r, of kind.
func because(kind error, r *reject.Error) error { return &kinded{kind: kind, r: r} }

// unresolved is the refusal of a request whose Host serves no community
// (404), else err.
func unresolved(err error) error {
	if community.Unknown(err) {
		return because(err, reject.Invalidf("no community is served at this host"))
	}
	return err
}
