package blossom

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

const hashA = "b1674191a88ec5cdd733e4240a81803105dc412d6c6708d53ab94fc248f4f553"
const hashB = "88a74d0b866c8ba79251a11fe5ac807839226870e77355f02eaf68b156522576"

func TestParseBlobName(t *testing.T) {
	for _, c := range []struct {
		in, hash, ext string
		ok            bool
	}{
		{hashA, hashA, "", true},
		{hashA + ".png", hashA, "png", true},
		{hashA + ".JPEG", hashA, "jpeg", true},
		{strings.ToUpper(hashA), "", "", false},
		{hashA[:63], "", "", false},
		{hashA + "0", "", "", false},
		{"g" + hashA[1:], "", "", false},
		{hashA + ".", "", "", false},
		{hashA + ".tar.gz", "", "", false},
		{hashA + ".abcdefghijk", "", "", false},
		{hashA + ".p%6eg", "", "", false},
		{"", "", "", false},
	} {
		h, e, err := ParseBlobName(c.in)
		if (err == nil) != c.ok || h != c.hash || e != c.ext {
			t.Errorf("ParseBlobName(%q) = %q, %q, %v; want %q, %q, ok %v", c.in, h, e, err, c.hash, c.ext, c.ok)
		}
		if err != nil && Status(err) != http.StatusBadRequest {
			t.Errorf("ParseBlobName(%q): status %d, want 400", c.in, Status(err))
		}
	}
}

func TestParseType(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"image/png", "image/png", true},
		{"Image/PNG; charset=x", "image/png", true},
		{"png", "", false},
		{"image/png;;;=", "", false},
		{strings.Repeat("a", 130) + "/b", "", false},
	} {
		got, err := ParseType(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseType(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && Status(err) != http.StatusUnsupportedMediaType {
			t.Errorf("ParseType(%q): status %d", c.in, Status(err))
		}
	}
}

func TestCheckSize(t *testing.T) {
	l := Defaults
	for _, c := range []struct {
		size   int64
		status int
	}{
		{-1, 411}, {0, 400}, {1, 0}, {l.MaxBytes, 0}, {l.MaxBytes + 1, 413},
	} {
		err := l.CheckSize(c.size)
		if (c.status == 0) != (err == nil) || (err != nil && Status(err) != c.status) {
			t.Errorf("CheckSize(%d) = %v, want status %d", c.size, err, c.status)
		}
	}
	if !l.Direct(l.DirectMaxBytes) || l.Direct(l.DirectMaxBytes+1) {
		t.Error("Direct's bound is DirectMaxBytes")
	}
}

func TestDescribe(t *testing.T) {
	d := Describe("https://relay.example", hashA, 10, "image/png", 5)
	b, _ := json.Marshal(d)
	want := `{"url":"https://relay.example/` + hashA + `.png","sha256":"` + hashA + `","size":10,"type":"image/png","uploaded":5}`
	if string(b) != want {
		t.Fatalf("descriptor %s, want %s", b, want)
	}
	if k := BlobKey("c1", hashA); k != "blobs/c1/"+hashA {
		t.Fatal(k)
	}
}

// TestServedTypesNeverRenderActiveContent: a blob is served with its
// declared type only when that type is passive media; HTML, SVG, XML,
// JavaScript and anything unknown are served as application/octet-stream
// attachments.
func TestServedTypesNeverRenderActiveContent(t *testing.T) {
	for _, c := range []struct{ declared, typ, disposition string }{
		{"image/png", "image/png", "inline"},
		{"image/jpeg", "image/jpeg", "inline"},
		{"video/mp4", "video/mp4", "inline"},
		{"audio/mpeg", "audio/mpeg", "inline"},
		{"application/pdf", "application/pdf", "inline"},
		{"text/html", DefaultType, "attachment"},
		{"image/svg+xml", DefaultType, "attachment"},
		{"application/xhtml+xml", DefaultType, "attachment"},
		{"text/xml", DefaultType, "attachment"},
		{"application/javascript", DefaultType, "attachment"},
		{"text/javascript", DefaultType, "attachment"},
		{"multipart/x-mixed-replace", DefaultType, "attachment"},
		{"application/x-unknown", DefaultType, "attachment"},
		{DefaultType, DefaultType, "attachment"},
		{"", DefaultType, "attachment"},
	} {
		if typ, disp := Served(c.declared); typ != c.typ || disp != c.disposition {
			t.Errorf("Served(%q) = %q, %q; want %q, %q", c.declared, typ, disp, c.typ, c.disposition)
		}
	}
}

// sign builds an authorization event; edit changes it before signing.
func sign(t testing.TB, sk string, now time.Time, edit func(*nostr.Event)) *nostr.Event {
	t.Helper()
	ev := &nostr.Event{Kind: AuthKind, CreatedAt: nostr.Timestamp(now.Unix() - 5), Content: "Upload Blob",
		Tags: nostr.Tags{{"t", "upload"}, {"x", hashA}, {"expiration", strconv.FormatInt(now.Unix()+600, 10)}}}
	if edit != nil {
		edit(ev)
	}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestCheckAuth(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	now := time.Unix(1_800_000_000, 0)
	upload := Need{Verbs: []string{VerbUpload, VerbMedia}, Hash: hashA, Host: "relay.example:443", Now: now}
	get := Need{Verbs: []string{VerbGet}, Hash: hashA, ServerSuffices: true, Host: "relay.example", Now: now}
	// BUD-06's HEAD /upload: the x tag may be left out.
	preflight := upload
	preflight.HashOptional = true
	dropX := func(e *nostr.Event) { e.Tags = append(e.Tags[:1], e.Tags[2:]...) }
	for _, c := range []struct {
		name   string
		edit   func(*nostr.Event)
		after  func(*nostr.Event) // changes made after signing
		need   Need
		reason string // "" accepted
	}{
		{name: "upload", need: upload},
		{name: "media verb", edit: func(e *nostr.Event) { e.Tags[0][1] = "media" }, need: upload},
		{name: "several x", edit: func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"x", hashB}) }, need: upload},
		{name: "server tag naming us", edit: func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"server", "https://Relay.Example/"}) }, need: upload},
		{name: "bare server tag", edit: func(e *nostr.Event) {
			e.Tags = append(e.Tags, nostr.Tag{"server", "other.example"}, nostr.Tag{"server", "relay.example"})
		}, need: upload},
		{name: "another server", edit: func(e *nostr.Event) { e.Tags = append(e.Tags, nostr.Tag{"server", "https://cdn.other.example"}) }, need: upload, reason: "bound to other servers"},
		{name: "wrong kind", edit: func(e *nostr.Event) { e.Kind = 27235 }, need: upload, reason: "kind is 27235"},
		{name: "wrong verb", edit: func(e *nostr.Event) { e.Tags[0][1] = "delete" }, need: upload, reason: `t tag is "delete"`},
		{name: "no verb", edit: func(e *nostr.Event) { e.Tags = e.Tags[1:] }, need: upload, reason: `t tag is ""`},
		{name: "another hash", edit: func(e *nostr.Event) { e.Tags[1][1] = hashB }, need: upload, reason: "no x tag"},
		{name: "no hash", edit: func(e *nostr.Event) { e.Tags = append(e.Tags[:1], e.Tags[2:]...) }, need: upload, reason: "no x tag"},
		{name: "expired", edit: func(e *nostr.Event) { e.Tags[2][1] = strconv.FormatInt(now.Unix(), 10) }, need: upload, reason: "expired"},
		{name: "no expiration", edit: func(e *nostr.Event) { e.Tags = e.Tags[:2] }, need: upload, reason: "no expiration"},
		{name: "bad expiration", edit: func(e *nostr.Event) { e.Tags[2][1] = "soon" }, need: upload, reason: "not a unix time"},
		{name: "future", edit: func(e *nostr.Event) { e.CreatedAt = nostr.Timestamp(now.Unix() + 3600) }, need: upload, reason: "in the future"},
		{name: "unsigned", after: func(e *nostr.Event) { e.Sig = "" }, need: upload, reason: "not signed"},
		{name: "bad signature", after: func(e *nostr.Event) { e.Sig = strings.Repeat("0", 128) }, need: upload, reason: "not signed"},
		{name: "tampered", after: func(e *nostr.Event) { e.Content = "Delete everything" }, need: upload, reason: "id does not match"},
		{name: "list without hash", edit: func(e *nostr.Event) { e.Tags[0][1] = "list" }, need: Need{Verbs: []string{VerbList}, Now: now, Host: "relay.example"}},
		{name: "get with x", edit: func(e *nostr.Event) { e.Tags[0][1] = "get" }, need: get},
		{name: "get with a server tag instead", edit: func(e *nostr.Event) {
			e.Tags[0][1] = "get"
			e.Tags[1] = nostr.Tag{"server", "https://relay.example/"}
		}, need: get},
		{name: "get for another blob", edit: func(e *nostr.Event) { e.Tags[0][1] = "get"; e.Tags[1][1] = hashB }, need: get, reason: "nor a server tag"},
		{name: "get for another server", edit: func(e *nostr.Event) {
			e.Tags[0][1] = "get"
			e.Tags[1] = nostr.Tag{"server", "cdn.other.example"}
		}, need: get, reason: "nor a server tag"},
		{name: "preflight with x", need: preflight},
		{name: "preflight without x (welshman's makeBlossomAuthEvent)", edit: func(e *nostr.Event) {
			dropX(e)
			e.Tags = append(e.Tags, nostr.Tag{"u", "https://relay.example"})
		}, need: preflight},
		{name: "preflight with x for another blob", edit: func(e *nostr.Event) { e.Tags[1][1] = hashB }, need: preflight, reason: "no x tag for blob"},
		{name: "preflight with an empty x", edit: func(e *nostr.Event) { e.Tags[1][1] = "" }, need: preflight, reason: "no x tag for blob"},
		{name: "preflight without x: still the upload verb", edit: func(e *nostr.Event) { dropX(e); e.Tags[0][1] = "delete" }, need: preflight, reason: `t tag is "delete"`},
		{name: "preflight without x: still expiring", edit: func(e *nostr.Event) {
			dropX(e)
			e.Tags[1][1] = strconv.FormatInt(now.Unix(), 10)
		}, need: preflight, reason: "expired"},
		{name: "preflight without x: still bound to its servers", edit: func(e *nostr.Event) {
			dropX(e)
			e.Tags = append(e.Tags, nostr.Tag{"server", "cdn.other.example"})
		}, need: preflight, reason: "bound to other servers"},
		{name: "a PUT's authorization without x is refused", edit: dropX, need: upload, reason: "no x tag for blob"},
		{name: "upload's x needs its hash even with a server tag", edit: func(e *nostr.Event) {
			e.Tags[1] = nostr.Tag{"server", "relay.example"}
		}, need: upload, reason: "no x tag for blob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := sign(t, sk, now, c.edit)
			if c.after != nil {
				c.after(ev)
			}
			got, err := CheckAuth(ev, c.need, nil)
			if c.reason == "" {
				if err != nil || got != pk {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.reason)
			}
			if Status(err) != http.StatusUnauthorized || !strings.HasPrefix(err.Error(), "auth-required: ") {
				t.Fatalf("status %d, text %q", Status(err), err)
			}
			if r, ok := reject.As(err); !ok || r.Prefix != reject.AuthRequired {
				t.Fatalf("not a reject.Error: %v", err)
			}
		})
	}
}

func TestParseAuthorization(t *testing.T) {
	sk := nostr.GeneratePrivateKey()
	ev := sign(t, sk, time.Now(), nil)
	raw, _ := json.Marshal(ev)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		got, err := ParseAuthorization("Nostr " + enc.EncodeToString(raw))
		if err != nil || got.ID != ev.ID {
			t.Fatalf("decode: %v", err)
		}
	}
	for _, h := range []string{"", "Bearer abc", "Nostr !!!", "Nostr " + base64.StdEncoding.EncodeToString([]byte("[]")), "Nostr " + strings.Repeat("A", MaxAuthorization)} {
		_, err := ParseAuthorization(h)
		var r *Refusal
		if !errors.As(err, &r) || r.Status != http.StatusUnauthorized {
			t.Errorf("ParseAuthorization(%.20q) = %v, want a 401", h, err)
		}
	}
}

// FuzzParse feeds the header and path parsers arbitrary input: they
// answer a value or a 4xx refusal, never panic.
func FuzzParse(f *testing.F) {
	f.Add("Nostr eyJraW5kIjoyNDI0Mn0", hashA+".png", "image/png")
	f.Add("Nostr !!", "zz", "a/b; c=d")
	f.Add("", hashA, "")
	f.Fuzz(func(t *testing.T, header, name, typ string) {
		if ev, err := ParseAuthorization(header); err == nil {
			_, _ = CheckAuth(ev, Need{Verbs: []string{VerbUpload}, Hash: hashA, Host: name, Now: time.Now()}, nil)
		} else if s := Status(err); s < 400 || s > 499 {
			t.Fatalf("status %d", s)
		}
		if h, _, err := ParseBlobName(name); err == nil && len(h) != HashLen {
			t.Fatalf("hash %q", h)
		} else if err != nil && Status(err) != 400 {
			t.Fatalf("status %d", Status(err))
		}
		if _, err := ParseType(typ); err != nil && Status(err) != 415 {
			t.Fatalf("status %d", Status(err))
		}
	})
}
