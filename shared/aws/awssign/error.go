package awssign

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// StatusError is a final response outside 2xx.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the AWS error code (X-Amzn-ErrorType, else the body's
	// __type or code), e.g. "LimitExceededException"; "" when absent.
	Code string
	// Message is the body's message field, else a short excerpt of the
	// body (see Excerpt); "" for an empty body.
	Message string
	// Attempts is the number of attempts made.
	Attempts int
}

// Error reads like "status 403 ForbiddenException: Forbidden".
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// maxExcerpt bounds the message of a StatusError, in bytes.
const maxExcerpt = 256

// newStatusError reads the error out of a response: AWS JSON APIs answer
// {"message": "..."} (API Gateway) or {"Type": "User", "message": "..."}
// (Lambda) with the code in X-Amzn-ErrorType.
func newStatusError(status int, h http.Header, body []byte) *StatusError {
	e := &StatusError{StatusCode: status, Code: errorCode(h.Get("X-Amzn-Errortype"))}
	var j struct {
		Message  string `json:"message"`
		MessageU string `json:"Message"`
		Type     string `json:"__type"`
		Code     string `json:"code"`
	}
	if json.Unmarshal(body, &j) == nil {
		e.Message = j.Message
		if e.Message == "" {
			e.Message = j.MessageU
		}
		if e.Code == "" {
			e.Code = errorCode(j.Type)
		}
		if e.Code == "" {
			e.Code = errorCode(j.Code)
		}
		if e.Message != "" {
			e.Message = Excerpt([]byte(e.Message))
			return e
		}
	}
	e.Message = Excerpt(body)
	return e
}

// errorCode strips what AWS appends or prepends to an error code
// ("Code:http://internal...", "aws.namespace#Code").
func errorCode(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// Excerpt is a short, printable, single-line excerpt of a response body
// for an error message: spaces collapsed, control characters and invalid
// UTF-8 dropped, cut at about 256 bytes with "…".
func Excerpt(body []byte) string {
	var b strings.Builder
	space := false
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		body = body[n:]
		switch {
		case r == utf8.RuneError && n <= 1:
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r):
			continue
		}
		if b.Len()+utf8.RuneLen(r)+1 > maxExcerpt {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
