package emulator

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// AuthorizerHandler is a WebSocket $connect REQUEST authorizer.
type AuthorizerHandler = func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// authorize runs the $connect authorizer for r, as API Gateway does before
// $connect: an Allow policy lets the connection on with the authorizer's
// context, which every later event of the connection carries; a Deny is
// 403, a failed authorizer 500 (status 0: allowed).
func (a *WebSocketAPI) authorize(r *http.Request, s *socket, src string) (map[string]interface{}, int) {
	headers, mv := connectHeaders(r, src)
	ev := events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type:              "REQUEST",
		MethodArn:         "arn:aws:execute-api:us-east-1:000000000000:localdev/" + a.stage() + "/$connect",
		Headers:           headers,
		MultiValueHeaders: mv,
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
			AccountID: "000000000000", Stage: a.stage(), RequestID: requestID(), APIID: "localdev",
			Identity: events.APIGatewayCustomAuthorizerRequestTypeRequestIdentity{SourceIP: s.sourceIP},
		},
	}
	ctx, cancel := context.WithTimeout(r.Context(), IntegrationTimeout)
	defer cancel()
	resp, err := a.Authorizer(ctx, ev)
	if err != nil {
		a.log().Warn("emulator: $connect authorizer failed", "connection", s.id, "err", err)
		return nil, http.StatusInternalServerError
	}
	for _, st := range resp.PolicyDocument.Statement {
		if !strings.EqualFold(st.Effect, "Allow") {
			return nil, http.StatusForbidden
		}
	}
	if len(resp.PolicyDocument.Statement) == 0 {
		return nil, http.StatusForbidden
	}
	return resp.Context, 0
}

// authorizerContext is an event's requestContext.authorizer: nil without
// an authorizer, so an event is as it was before one existed.
func authorizerContext(c map[string]interface{}) interface{} {
	if c == nil {
		return nil
	}
	return c
}
