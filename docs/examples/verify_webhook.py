"""Verifying a webhook from the Partner Reservation Registration Service, with Python's standard library only.

Copy this file into your project (Python 3.8 or later) and call verify_webhook() with the request's headers and
its raw body: in Flask `request.headers` and `request.get_data()`, in Django `request.headers` and
`request.body`. Run as a script, it is a small receiver (http.server) that answers 204 to an authentic event
and 401 to anything else, printing one line per request:

    WEBHOOK_SECRET=whsec_... PORT=8000 python3 verify_webhook.py
    WEBHOOK_SECRET=whsec_... WEBHOOK_SIGNATURE=standard PORT=8000 python3 verify_webhook.py

The second checks the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) that every
delivery also carries, with verify_standard_webhook(); the official `standardwebhooks` package does the same.

PORT=0 picks a free port; the first line printed says which. The test suite runs this file against real
deliveries (test/docs/receiver-examples.test.ts). See docs/webhooks.md for the receiver guide.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

# Receiver rule 2: at most 5 minutes between X-Service-Timestamp and your clock, either way.
TOLERANCE_SECONDS = 300

_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_SIGNATURE = re.compile(r"sha256=[0-9a-f]{64}")


class Rejected(Exception):
    """Not an authentic event: answer 401 and discard it. The message says why."""


def verify_webhook(headers, raw_body: bytes, secret: str, now: float | None = None) -> dict:
    """Returns the event (a dict) or raises Rejected.

    headers:  a case-insensitive mapping (http.server's, Flask's or Django's request.headers)
    raw_body: the body exactly as received, as bytes, before anything parses it
    secret:   the endpoint's secret exactly as the API returned it, whsec_ prefix included
    now:      your clock in Unix seconds (default: time.time())
    """
    timestamp = headers.get("X-Service-Timestamp")
    signature = headers.get("X-Service-Signature")
    if timestamp is None:
        raise Rejected("missing X-Service-Timestamp header")
    if signature is None:
        raise Rejected("missing X-Service-Signature header")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise Rejected("malformed X-Service-Timestamp header (expected Unix seconds)")
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SECONDS:
        raise Rejected("X-Service-Timestamp is more than 5 minutes away from this server's clock")
    if not _SIGNATURE.fullmatch(signature):
        raise Rejected("malformed X-Service-Signature header (expected sha256= and 64 hex characters)")

    # The key is the secret string's UTF-8 bytes; the message is "<timestamp>.<raw body>".
    expected = "sha256=" + hmac.new(
        secret.encode("utf-8"), timestamp.encode("ascii") + b"." + raw_body, hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected, signature):  # constant time, never ==
        raise Rejected("signature mismatch")

    return _authentic_event(raw_body, headers.get("X-Service-Event-Id"))


def verify_standard_webhook(headers, raw_body: bytes, secret: str, now: float | None = None) -> dict:
    """The same check on the Standard Webhooks headers (standardwebhooks.com). Returns the event or raises Rejected.

    The key is the bytes that the secret's part after whsec_ encodes: standard base64 (secrets issued since
    2026-11-28) or base64url (secrets issued before; both are read here). The message is
    "<webhook-id>.<webhook-timestamp>.<raw body>"; webhook-signature holds "v1,<base64 HMAC-SHA256>" (a space
    separates several, as during a key change on other senders).
    """
    event_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if event_id is None or timestamp is None or signatures is None:
        raise Rejected("missing webhook-id, webhook-timestamp or webhook-signature header")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise Rejected("malformed webhook-timestamp header (expected Unix seconds)")
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SECONDS:
        raise Rejected("webhook-timestamp is more than 5 minutes away from this server's clock")
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    key = base64.urlsafe_b64decode(encoded.replace("+", "-").replace("/", "_") + "=" * (-len(encoded) % 4))
    message = f"{event_id}.{timestamp}.".encode("utf-8") + raw_body
    expected = base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode("ascii")
    if not any(
        version == "v1" and hmac.compare_digest(expected, signature)  # constant time, never ==
        for version, _, signature in (candidate.partition(",") for candidate in signatures.split(" "))
    ):
        raise Rejected("signature mismatch")
    return _authentic_event(raw_body, event_id)


def _authentic_event(raw_body: bytes, event_id: str | None) -> dict:
    """Authentic: only now parse the body."""
    try:
        event = json.loads(raw_body)
    except ValueError:
        raise Rejected("body is not valid JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("id"), str) or not isinstance(event.get("type"), str):
        raise Rejected("body is not an event")
    # The id header is not signed by the spec's scheme; the body id is. They must agree so that deduplicating on
    # either is safe.
    if event_id is not None and event_id != event["id"]:
        raise Rejected("X-Service-Event-Id does not match the body id")
    return event


class Receiver(BaseHTTPRequestHandler):
    """POST only. http.server does not decode chunked bodies; every delivery carries a Content-Length."""

    secret = ""
    verify = staticmethod(verify_webhook)

    def do_POST(self) -> None:
        raw_body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = self.verify(self.headers, raw_body, self.secret)
        except Rejected as rejected:
            print(f"rejected: {rejected}", flush=True)
            self.answer(401, str(rejected))
            return
        print(f"accepted {event['id']} {event['type']}", flush=True)
        # Store the event here, deduplicated by event["id"], and process it after answering (guide §4, §7).
        self.answer(204)

    def do_GET(self) -> None:
        self.answer(405)

    def answer(self, status: int, text: str = "") -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        if status == 405:
            self.send_header("Allow", "POST")
        if body:
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # one line per request is printed above
        pass


if __name__ == "__main__":
    Receiver.secret = os.environ.get("WEBHOOK_SECRET", "")
    if os.environ.get("WEBHOOK_SIGNATURE") == "standard":
        Receiver.verify = staticmethod(verify_standard_webhook)
    if not Receiver.secret.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the endpoint's secret (whsec_...), as POST /api/partners/webhooks returned it")
    host = os.environ.get("HOST", "127.0.0.1")
    server = HTTPServer((host, int(os.environ.get("PORT", "8000"))), Receiver)
    print(f"listening on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()
