// Package emulator is the local stand-in for API Gateway: it turns plain
// HTTP requests into real events.APIGatewayV2HTTPRequest values, calls the
// same handler functions the Lambdas run, and writes their responses back.
// websocket.go does the same for the WebSocket API.
package emulator

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// HTTPHandler is an API Gateway HTTP API (payload v2) Lambda handler.
type HTTPHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// API Gateway HTTP API limits the emulator enforces.
const (
	MaxPayload         = 10 << 20
	IntegrationTimeout = 30 * time.Second
	// MaxInvokePayload is Lambda's synchronous invocation payload limit:
	// an event larger than this (a binary body base64-encoded above about
	// 4.5 MB) never reaches the function.
	MaxInvokePayload = 6 << 20
)

// HTTPAPI routes requests by "METHOD /path" route keys, as API Gateway does.
type HTTPAPI struct {
	Routes map[string]HTTPHandler
}

// ServeHTTP converts, invokes and writes back one request.
func (a *HTTPAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, h, ok := a.lookup(r.Method, r.URL.Path)
	if !ok && r.Method == http.MethodOptions {
		for k, v := range a.Routes {
			if _, path, _ := strings.Cut(k, " "); pathMatches(path, r.URL.Path) {
				key, h, ok = k, v, true
				break
			}
		}
	}
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPayload+1))
	if err != nil {
		http.Error(w, `{"message":"could not read body"}`, http.StatusBadRequest)
		return
	}
	if len(body) > MaxPayload {
		http.Error(w, `{"message":"Request Entity Too Large"}`, http.StatusRequestEntityTooLarge)
		return
	}
	ev := HTTPEvent(r, key, body)
	if len(body) > MaxInvokePayload/2 {
		if raw, err := json.Marshal(ev); err != nil || len(raw) > MaxInvokePayload {
			http.Error(w, `{"message":"Request Entity Too Large"}`, http.StatusRequestEntityTooLarge)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), IntegrationTimeout)
	defer cancel()
	resp, err := h(ctx, ev)
	if err != nil {
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	out := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if out, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
			return
		}
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// lookup finds the route of method and path: its exact key, else a key
// whose path has {name} segments, each matching one path segment, as API
// Gateway's path parameters do (an exact route wins).
func (a *HTTPAPI) lookup(method, path string) (string, HTTPHandler, bool) {
	key := method + " " + path
	if h, ok := a.Routes[key]; ok {
		return key, h, true
	}
	for k, h := range a.Routes {
		if m, p, _ := strings.Cut(k, " "); m == method && strings.Contains(p, "{") && pathMatches(p, path) {
			return k, h, true
		}
	}
	return "", nil, false
}

// pathMatches reports whether path matches a route path with {name}
// segments.
func pathMatches(route, path string) bool {
	rs, ps := strings.Split(route, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if strings.HasPrefix(rs[i], "{") && strings.HasSuffix(rs[i], "}") {
			if ps[i] == "" {
				return false
			}
		} else if rs[i] != ps[i] {
			return false
		}
	}
	return true
}

// HTTPEvent builds the API Gateway v2 event for r, as API Gateway would:
// lowercase header names, repeated headers joined by commas, cookies split
// out, a non-UTF-8 body base64-encoded.
func HTTPEvent(r *http.Request, routeKey string, body []byte) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	headers["host"] = r.Host
	headers["x-forwarded-proto"] = "http"
	src, _, _ := net.SplitHostPort(r.RemoteAddr)
	headers["x-forwarded-for"] = src
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	query := map[string]string{}
	for k, vs := range r.URL.Query() {
		query[k] = strings.Join(vs, ",")
	}
	now := time.Now()
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              routeKey,
		RawPath:               r.URL.Path,
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   routeKey,
			AccountID:  "000000000000",
			Stage:      "$default",
			RequestID:  requestID(),
			APIID:      "localdev",
			DomainName: r.Host,
			Time:       now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:  now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  src,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body = base64.StdEncoding.EncodeToString(body)
		ev.IsBase64Encoded = true
	}
	return ev
}

func requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
