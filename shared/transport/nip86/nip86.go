// Package nip86 is the NIP-86 relay management API's shape: JSON-RPC
// style requests ({"method", "params"}) over HTTP POST with Content-Type
// application/nostr+json+rpc, authenticated by NIP-98 (the route table
// verifies the token for the community served at the request's host,
// bound to the body). It decodes a call for the use case
// (shared/service/manage, which holds the methods and their rules) and
// encodes its outcome through its one error table (Answer).
package nip86

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/manage"
)

// ContentType is the media type of NIP-86 requests and answers.
const ContentType = "application/nostr+json+rpc"

// Request is one call.
type Request struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// Response is its answer: Result on success, Error otherwise.
type Response struct {
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Decode reads body as one call.
func Decode(body []byte) (manage.Call, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil || req.Method == "" {
		return manage.Call{}, reject.Invalidf("body must be {\"method\": ..., \"params\": [...]}")
	}
	return manage.Call{Method: req.Method, Params: req.Params}, nil
}

// ErrForbidden is a call by a key that is not an operator (the door's
// refusal).
var ErrForbidden = manage.ErrForbidden

// Answer is NIP-86's one mapping from a call's outcome to its answer: the
// HTTP status and the Response, whose error is the refusal's NIP-01
// prefixed text: 403 for a key that is not an operator, the door's status
// for its other refusals (404 for a community no longer served), 400 for
// any other refusal (a bad call, whatever its prefix), 200 with the
// result. ok is false for an error that is not a refusal: the transport
// answers it as any internal failure.
func Answer(result any, err error) (status int, resp Response, ok bool) {
	if err == nil {
		return http.StatusOK, Response{Result: result}, true
	}
	r, refused := reject.As(err)
	var door *manage.AtDoor
	switch {
	case !refused:
		return 0, Response{}, false
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden, Response{Error: r.Error()}, true
	case errors.As(err, &door):
		return reject.Map(err).Status, Response{Error: r.Error()}, true
	}
	return http.StatusBadRequest, Response{Error: r.Error()}, true
}
