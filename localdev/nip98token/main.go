// Command nip98token prints what a curl of the HTTP bridge needs: the
// value of a NIP-98 Authorization header (a kind 27235 event bound to the
// method, the URL and, with -body, the body's SHA-256), or with -sign a
// client event signed with the same key.
//
//	go run ./localdev/nip98token -key <hex> -method POST -url http://127.0.0.1:8080/query -body filters.json
//	go run ./localdev/nip98token -key <hex> -sign event.json   # kind, content, tags in; signed event out
//
// -key is a 32-byte secret in hex; -key new makes one and prints it on
// stderr with its public key. The token is valid for 60 seconds and once.
package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

func main() {
	key := flag.String("key", "", "the secret key, 64 hex characters, or new")
	method := flag.String("method", "POST", "the request's method")
	url := flag.String("url", "", "the request's URL as the client addresses it, e.g. http://127.0.0.1:8080/query")
	body := flag.String("body", "", "a file holding the request body, bound by the token's payload tag (- for stdin)")
	sign := flag.String("sign", "", "instead of a token, sign the event in this file (- for stdin) and print it")
	flag.Parse()
	if err := run(*key, *method, *url, *body, *sign, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nip98token:", err)
		os.Exit(1)
	}
}

func run(key, method, url, bodyFile, signFile string, stdout, stderr io.Writer) error {
	if key == "new" {
		key = nostr.GeneratePrivateKey()
		pub, _ := nostr.GetPublicKey(key)
		fmt.Fprintf(stderr, "secret key %s\npublic key %s\n", key, pub)
	}
	if signFile != "" {
		raw, err := readFile(signFile)
		if err != nil {
			return err
		}
		out, err := signEvent(key, raw, time.Now())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", out)
		return err
	}
	var body []byte
	if bodyFile != "" {
		var err error
		if body, err = readFile(bodyFile); err != nil {
			return err
		}
	}
	tok, err := token(key, method, url, body, bodyFile != "", time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

func readFile(name string) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if name == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// token is the Authorization header's value: "Nostr " and the base64 of a
// signed kind 27235 event with u, method and (withBody) payload tags.
func token(key, method, url string, body []byte, withBody bool, now time.Time) (string, error) {
	if url == "" {
		return "", errors.New("-url is required")
	}
	ev := nostr.Event{
		Kind:      27235,
		CreatedAt: nostr.Timestamp(now.Unix()),
		Tags:      nostr.Tags{{"u", url}, {"method", method}},
	}
	if withBody {
		sum := sha256.Sum256(body)
		ev.Tags = append(ev.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	if err := signWith(&ev, key); err != nil {
		return "", err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", fmt.Errorf("encode the token: %w", err)
	}
	return "Nostr " + base64.StdEncoding.EncodeToString(b), nil
}

// signEvent signs the event in raw (kind, content and tags are kept;
// created_at is now unless set), as the key's pubkey.
func signEvent(key string, raw []byte, now time.Time) ([]byte, error) {
	var ev nostr.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("the event to sign is not a JSON nostr event: %w", err)
	}
	if ev.CreatedAt == 0 {
		ev.CreatedAt = nostr.Timestamp(now.Unix())
	}
	if ev.Tags == nil {
		ev.Tags = nostr.Tags{}
	}
	if err := signWith(&ev, key); err != nil {
		return nil, err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode the event: %w", err)
	}
	return b, nil
}

func signWith(ev *nostr.Event, key string) error {
	if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
		return errors.New("-key must be a 32-byte secret in hex (or new)")
	}
	if err := ev.Sign(key); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	return nil
}
