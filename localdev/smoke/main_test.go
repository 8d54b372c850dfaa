package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

func TestSmokePassesAgainstTheRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := e2e.StartTest(t, e2e.Options{Log: testkit.Quiet()})
	var out bytes.Buffer
	if !Run(ctx, Config{URL: r.HTTPURL, Timeout: 10 * time.Second, Wait: 10 * time.Second}, &out) {
		t.Fatalf("smoke failed:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "10/10 smoke checks pass\n") {
		t.Fatalf("last line:\n%s", out.String())
	}
}

// TestSmokeAppUploadWithMedia: against a relay with media (and the
// emulator's front, CloudFront's stand-in), the app-upload check sends a
// blob above the direct limit with Buzz desktop's call and reads it back.
func TestSmokeAppUploadWithMedia(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := e2e.StartTest(t, e2e.Options{Log: testkit.Quiet(), Media: true})
	var out bytes.Buffer
	if !Run(ctx, Config{URL: r.HTTPURL, Timeout: 30 * time.Second, Wait: 10 * time.Second}, &out) {
		t.Fatalf("smoke failed:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "10/10 smoke checks pass\n") || !strings.Contains(out.String(), "with the Buzz app's PUT /media/upload") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestSmokeFailsAgainstNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	if Run(context.Background(), Config{URL: "http://" + addr, Timeout: time.Second}, &out) {
		t.Fatal("smoke passed against a closed port")
	}
	if !strings.HasSuffix(out.String(), "0/10 smoke checks pass\n") || !strings.Contains(out.String(), "skipped: needs auth") {
		t.Fatalf("output:\n%s", out.String())
	}
}
