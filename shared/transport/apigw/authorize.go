package apigw

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// AuthorizerHostKey is the authorizer context key that carries the host a
// WebSocket connection addressed.
const AuthorizerHostKey = "host"

// WebSocketAuthorizer is the handler type of a $connect REQUEST authorizer.
type WebSocketAuthorizer = func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// Authorize is functions/ws-authorize, the WebSocket API's $connect
// authorizer on a deployment that hosts several hostnames: API Gateway
// gives later events of a connection no headers, only the authorizer's
// context, so it records the host the client addressed (o.HostHeader, else
// Host) there. It allows every connection and touches nothing: the relay
// refuses a host that serves no community itself.
func Authorize(o Origin) WebSocketAuthorizer {
	return func(_ context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
		headers := make(map[string]string, len(ev.Headers))
		for k, v := range ev.Headers {
			headers[strings.ToLower(k)] = v
		}
		host := o.forwardedHost(headers)
		if host == "" {
			host = headers["host"]
		}
		return events.APIGatewayCustomAuthorizerResponse{
			PrincipalID: "buzz-relay",
			PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
				Version: "2012-10-17",
				Statement: []events.IAMPolicyStatement{{
					Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{ev.MethodArn},
				}},
			},
			Context: map[string]interface{}{AuthorizerHostKey: strings.ToLower(host)},
		}, nil
	}
}

// authorizedHost reads the host Authorize recorded, "" without one.
func authorizedHost(a interface{}) string {
	m, ok := a.(map[string]interface{})
	if !ok {
		return ""
	}
	h, _ := m[AuthorizerHostKey].(string)
	return h
}
