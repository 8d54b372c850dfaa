package emulator

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/domain/session"
)

// WebSocketHandler is an API Gateway WebSocket API Lambda handler.
type WebSocketHandler = func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// API Gateway WebSocket API limits the emulator enforces.
const (
	MaxMessageSize     = 128 << 10 // a larger message closes the socket with 1009
	IdleTimeout        = 10 * time.Minute
	ConnectionLifetime = session.Lifetime // the relay's one statement of it
	// DefaultInFlight is the emulator's bound on one socket's concurrent
	// invocations (API Gateway has none; Lambda's concurrency is the limit).
	DefaultInFlight = 64
)

// WebSocketAPI emulates an API Gateway WebSocket API with the $connect,
// $default and $disconnect routes, plus its @connections management API
// (management.go). Each socket gets a connection id; every text message is
// one $default invocation with a real events.APIGatewayWebsocketProxyRequest.
// As behind API Gateway, the invocations of one socket are not serialised:
// each message starts its own as it arrives, up to InFlight at a time per
// socket, and their replies may interleave. Handlers answer through the
// management API, as they must behind API Gateway.
type WebSocketAPI struct {
	Connect, Default, Disconnect WebSocketHandler
	// Authorizer, when set, is the $connect REQUEST authorizer (authorize.go).
	Authorizer AuthorizerHandler
	// Stage is reported in the request context ("$default" when empty).
	Stage string
	// IdleTimeout and Lifetime default to API Gateway's 10 min and 2 h.
	IdleTimeout, Lifetime time.Duration
	// InFlight bounds the concurrent $default invocations of one socket
	// (DefaultInFlight when 0; 1 serialises them in arrival order).
	InFlight int
	// ManagementSlots bounds the @connections requests (management.go)
	// worked on at once: GOMAXPROCS when 0.
	ManagementSlots int
	// Costs are API Gateway's and Lambda's prices the emulator adds
	// (costs.go); the zero value adds none.
	Costs Costs
	Log   *slog.Logger

	mu        sync.Mutex
	conns     map[string]*socket
	connects  bucket // new connections per second (Costs.ConnectRate)
	stageRate bucket // the WebSocket stage's throttle (Costs.WSThrottle)
	httpRate  bucket // the HTTP stage's throttle (Costs.HTTPThrottle)

	slotsOnce sync.Once
	slots     chan struct{}
	posted    atomic.Int64 // Posted
}

// socket is one open connection.
type socket struct {
	id          string
	host        string
	c           *websocket.Conn
	connectedAt time.Time
	lastActive  atomic.Int64 // unix nanos
	sourceIP    string
	userAgent   string
	forgotten   atomic.Bool            // Forget: no $disconnect for this one
	authorizer  map[string]interface{} // the authorizer's context, in every event
	done        chan struct{}
	// opened is closed once the upgrade ended, c set when it succeeded;
	// the socket is registered (postable) from $connect's success on, as
	// behind API Gateway, so a client that read the 101 can be posted to.
	opened chan struct{}
	// out holds the posts API Gateway accepted for the client, written by
	// the socket's one writer until quit; dropped says why the emulator
	// closed a client that did not take them.
	out     chan []byte
	quit    chan struct{}
	dropped atomic.Value // string
}

func (s *socket) touch() { s.lastActive.Store(time.Now().UnixNano()) }

// conn waits until the upgrade ended and returns the socket's connection,
// nil when the upgrade failed.
func (s *socket) conn() *websocket.Conn {
	<-s.opened
	return s.c
}

// closeNow closes the socket's connection without a handshake, once the
// upgrade ended.
func (s *socket) closeNow() {
	if c := s.conn(); c != nil {
		c.CloseNow()
	}
}

// IsWebSocketUpgrade reports whether r asks to switch to WebSocket.
func IsWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// Wrap serves the WebSocket upgrade of GET / and the @connections API on the
// same address as next (the HTTP routes); everything else goes to next.
func (a *WebSocketAPI) Wrap(next http.Handler) http.Handler {
	mgmt := a.Management()
	next = throttled(a.Costs.HTTPThrottle, &a.httpRate, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case IsWebSocketUpgrade(r) && (r.URL.Path == "/" || r.URL.Path == ""):
			a.ServeHTTP(w, r)
		case strings.Contains(r.URL.EscapedPath(), "/@connections/"):
			mgmt.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (a *WebSocketAPI) stage() string {
	if a.Stage == "" {
		return "$default"
	}
	return a.Stage
}

func (a *WebSocketAPI) log() *slog.Logger {
	if a.Log == nil {
		return slog.Default()
	}
	return a.Log
}

// ServeHTTP runs $connect, upgrades, and serves the socket until it closes.
func (a *WebSocketAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	if !a.connects.take(a.Costs.ConnectRate, max(a.Costs.ConnectRate, 1), now) ||
		!a.stageRate.take(a.Costs.WSThrottle.Rate, a.Costs.WSThrottle.Burst, now) {
		// API Gateway's answer past the account's new-connection quota or
		// the stage's throttle.
		tooMany(w)
		return
	}
	id := connectionID()
	src, _, _ := net.SplitHostPort(r.RemoteAddr)
	s := &socket{id: id, host: r.Host, connectedAt: time.Now(), sourceIP: src, userAgent: r.UserAgent(),
		done: make(chan struct{}), opened: make(chan struct{}), out: make(chan []byte, a.Costs.outboundBuffer()), quit: make(chan struct{})}
	if a.Authorizer != nil {
		var status int
		if s.authorizer, status = a.authorize(r, s, src); status != 0 {
			http.Error(w, `{"message":"Forbidden"}`, status)
			return
		}
	}
	ev := a.event(s, "CONNECT", "$connect", "")
	ev.Headers, ev.MultiValueHeaders = connectHeaders(r, src)
	spend(a.Costs.InvokeOverhead)
	ctx, cancel := context.WithTimeout(r.Context(), IntegrationTimeout)
	resp, err := a.Connect(ctx, ev)
	cancel()
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		status := resp.StatusCode
		if err != nil || status == 0 {
			status = http.StatusInternalServerError
		}
		http.Error(w, `{"message":"Forbidden"}`, status)
		return
	}
	// Registered before the upgrade: the client may be posted to from the
	// moment it reads the 101 (posts wait in its outbound buffer).
	a.mu.Lock()
	if a.conns == nil {
		a.conns = map[string]*socket{}
	}
	a.conns[id] = s
	a.mu.Unlock()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		a.log().Warn("emulator: websocket accept", "connection", id, "err", err)
		a.mu.Lock()
		delete(a.conns, id)
		a.mu.Unlock()
		close(s.opened)
		a.disconnect(s, int64(websocket.StatusProtocolError), "accept failed")
		close(s.done)
		return
	}
	c.SetReadLimit(MaxMessageSize)
	s.c = c
	close(s.opened)
	s.touch()

	go s.write()
	code, reason := a.serve(s)
	close(s.quit)
	a.mu.Lock()
	delete(a.conns, id)
	a.mu.Unlock()
	_ = c.Close(code, reason)
	if !s.forgotten.Load() {
		a.disconnect(s, int64(code), reason)
	}
	close(s.done)
}

// serve reads messages until the socket ends and says why it ended.
func (a *WebSocketAPI) serve(s *socket) (websocket.StatusCode, string) {
	idle, life := a.IdleTimeout, a.Lifetime
	if idle <= 0 {
		idle = IdleTimeout
	}
	if life <= 0 {
		life = ConnectionLifetime
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var why atomic.Value
	go func() { // the idle timeout and the lifetime, as API Gateway applies them
		tick := time.NewTicker(min(idle/4, time.Second))
		defer tick.Stop()
		deadline := s.connectedAt.Add(life)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				reason := ""
				switch {
				case now.After(deadline):
					reason = "connection lifetime of " + life.String() + " reached"
				case now.Sub(time.Unix(0, s.lastActive.Load())) > idle:
					reason = "idle for " + idle.String()
				}
				if reason != "" {
					why.Store(reason)
					_ = s.c.Close(websocket.StatusGoingAway, reason)
					return
				}
			}
		}
	}()
	inflight := a.InFlight
	if inflight <= 0 {
		inflight = DefaultInFlight
	}
	sem := make(chan struct{}, inflight)
	var running sync.WaitGroup
	defer running.Wait() // $disconnect comes after the last invocation
	for {
		typ, data, err := s.c.Read(ctx)
		if err != nil {
			if w, ok := why.Load().(string); ok {
				return websocket.StatusGoingAway, w
			}
			if w, ok := s.dropped.Load().(string); ok {
				return websocket.StatusPolicyViolation, w
			}
			if s.forgotten.Load() {
				return websocket.StatusGoingAway, "forgotten"
			}
			switch st := websocket.CloseStatus(err); {
			case st == websocket.StatusMessageTooBig || strings.Contains(err.Error(), "read limited"):
				return websocket.StatusMessageTooBig, "Message too big"
			case st != -1:
				return st, "client closed"
			}
			return websocket.StatusNormalClosure, "closed"
		}
		s.touch()
		body := string(data)
		b64 := false
		if typ == websocket.MessageBinary || !utf8.Valid(data) {
			body, b64 = base64.StdEncoding.EncodeToString(data), true
		}
		ev := a.event(s, "MESSAGE", "$default", body)
		ev.IsBase64Encoded = b64
		if !a.stageRate.take(a.Costs.WSThrottle.Rate, a.Costs.WSThrottle.Burst, time.Now()) {
			// Throttled by the stage: not invoked; the client is told so
			// (the emulator's form of API Gateway's answer).
			go a.Post(ctx, s.id, []byte(`{"message":"Too Many Requests","connectionId":"`+s.id+`","requestId":"`+ev.RequestContext.RequestID+`"}`))
			continue
		}
		sem <- struct{}{}
		running.Add(1)
		go func() {
			defer func() { <-sem; running.Done() }()
			spend(a.Costs.InvokeOverhead)
			ictx, icancel := context.WithTimeout(context.Background(), IntegrationTimeout)
			defer icancel()
			if _, err := a.Default(ictx, ev); err != nil {
				a.log().Warn("emulator: $default handler failed", "connection", s.id, "err", err)
			}
		}()
	}
}

// write hands the accepted posts to the client, one at a time, until the
// socket ends; a write that fails (the socket was closed under it, or a
// client that stopped reading was dropped) ends it.
func (s *socket) write() {
	for {
		select {
		case <-s.quit:
			return
		case m := <-s.out:
			if err := s.c.Write(context.Background(), websocket.MessageText, m); err != nil {
				return
			}
		}
	}
}

func (a *WebSocketAPI) disconnect(s *socket, code int64, reason string) {
	ev := a.event(s, "DISCONNECT", "$disconnect", "")
	ev.RequestContext.DisconnectStatusCode = code
	ev.RequestContext.DisconnectReason = &reason
	ctx, cancel := context.WithTimeout(context.Background(), IntegrationTimeout)
	defer cancel()
	if _, err := a.Disconnect(ctx, ev); err != nil {
		a.log().Warn("emulator: $disconnect handler failed", "connection", s.id, "err", err)
	}
}

// event builds the API Gateway event of one route invocation.
func (a *WebSocketAPI) event(s *socket, eventType, route, body string) events.APIGatewayWebsocketProxyRequest {
	now := time.Now()
	return events.APIGatewayWebsocketProxyRequest{
		Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			AccountID:         "000000000000",
			Stage:             a.stage(),
			RequestID:         requestID(),
			APIID:             "localdev",
			ConnectedAt:       s.connectedAt.UnixMilli(),
			ConnectionID:      s.id,
			DomainName:        a.domain(s),
			EventType:         eventType,
			ExtendedRequestID: requestID(),
			MessageDirection:  "IN",
			RequestTime:       now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch:  now.UnixMilli(),
			RouteKey:          route,
			Identity:          events.APIGatewayRequestIdentity{SourceIP: s.sourceIP, UserAgent: s.userAgent},
			Authorizer:        authorizerContext(s.authorizer),
		},
	}
}

// domain is the host the socket connected to (API Gateway's domainName).
func (a *WebSocketAPI) domain(s *socket) string { return s.host }

func connectHeaders(r *http.Request, src string) (map[string]string, map[string][]string) {
	h := map[string]string{}
	mv := map[string][]string{}
	for k, vs := range r.Header {
		h[k] = strings.Join(vs, ",")
		mv[k] = append([]string(nil), vs...)
	}
	h["Host"], mv["Host"] = r.Host, []string{r.Host}
	h["X-Forwarded-Proto"], mv["X-Forwarded-Proto"] = "http", []string{"http"}
	h["X-Forwarded-For"], mv["X-Forwarded-For"] = src, []string{src}
	return h, mv
}

// connectionID is an id shaped like API Gateway's (base64, with '=').
func connectionID() string {
	var b [11]byte
	_, _ = rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// lookup returns the open socket id.
func (a *WebSocketAPI) lookup(id string) *socket {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conns[id]
}

// Forget drops connection id as if API Gateway lost its $disconnect: the
// socket closes, the handlers are not told, later posts get 410 Gone.
func (a *WebSocketAPI) Forget(id string) bool {
	s := a.lookup(id)
	if s == nil {
		return false
	}
	s.forgotten.Store(true)
	a.mu.Lock()
	delete(a.conns, id)
	a.mu.Unlock()
	s.closeNow()
	<-s.done
	return true
}

// Connections lists the open connection ids.
func (a *WebSocketAPI) Connections() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.conns))
	for id := range a.conns {
		out = append(out, id)
	}
	return out
}

// CloseAll closes every open socket (going away) and waits until each one's
// $disconnect ran.
func (a *WebSocketAPI) CloseAll() {
	a.mu.Lock()
	socks := make([]*socket, 0, len(a.conns))
	for _, s := range a.conns {
		socks = append(socks, s)
	}
	a.mu.Unlock()
	for _, s := range socks {
		s.closeNow()
	}
	for _, s := range socks {
		<-s.done
	}
}
