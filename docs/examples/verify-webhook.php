<?php
/**
 * Verifying a webhook from the Partner Reservation Registration Service, in plain PHP (8.1 or later; only
 * hash_hmac, hash_equals and json_decode). Copy this file into your project, require it, and call
 * verify_webhook() with the request's headers and its raw body, file_get_contents('php://input'):
 * ./webhook-receiver.php does exactly that. See docs/webhooks.md for the receiver guide.
 */

declare(strict_types=1);

/** Receiver rule 2: at most 5 minutes between X-Service-Timestamp and your clock, either way. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/** Not an authentic event: answer 401 and discard it. The message says why. */
final class WebhookRejected extends RuntimeException
{
}

/**
 * Returns the event (an array) or throws WebhookRejected.
 *
 * @param array<string, string> $headers header names in any case (request_headers() below)
 * @param string $rawBody the body exactly as received, before anything parses it
 * @param string $secret the endpoint's secret exactly as the API returned it, whsec_ prefix included
 * @param int|null $now your clock in Unix seconds (default: time())
 */
function verify_webhook(array $headers, string $rawBody, string $secret, ?int $now = null): array
{
    $headers = array_change_key_case($headers, CASE_LOWER);
    $timestamp = $headers['x-service-timestamp'] ?? null;
    $signature = $headers['x-service-signature'] ?? null;
    if ($timestamp === null) {
        throw new WebhookRejected('missing X-Service-Timestamp header');
    }
    if ($signature === null) {
        throw new WebhookRejected('missing X-Service-Signature header');
    }
    if (preg_match('/^[0-9]{1,15}$/D', $timestamp) !== 1) {
        throw new WebhookRejected('malformed X-Service-Timestamp header (expected Unix seconds)');
    }
    if (abs(($now ?? time()) - (int) $timestamp) > WEBHOOK_TOLERANCE_SECONDS) {
        throw new WebhookRejected("X-Service-Timestamp is more than 5 minutes away from this server's clock");
    }
    if (preg_match('/^sha256=[0-9a-f]{64}$/D', $signature) !== 1) {
        throw new WebhookRejected('malformed X-Service-Signature header (expected sha256= and 64 hex characters)');
    }

    // The key is the secret string's bytes; the message is "<timestamp>.<raw body>".
    $expected = 'sha256=' . hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    if (!hash_equals($expected, $signature)) { // constant time, never ==
        throw new WebhookRejected('signature mismatch');
    }

    return authentic_event($rawBody, $headers['x-service-event-id'] ?? null);
}

/**
 * The same check on the Standard Webhooks headers (standardwebhooks.com), which every delivery also carries.
 * Returns the event or throws WebhookRejected. The key is the bytes that the secret's part after whsec_ encodes:
 * standard base64 (secrets issued since 2026-11-28) or base64url (issued before; both are read here). The message
 * is "<webhook-id>.<webhook-timestamp>.<raw body>"; webhook-signature holds "v1,<base64 HMAC-SHA256>" (a space
 * separates several).
 *
 * @param array<string, string> $headers header names in any case
 */
function verify_standard_webhook(array $headers, string $rawBody, string $secret, ?int $now = null): array
{
    $headers = array_change_key_case($headers, CASE_LOWER);
    $eventId = $headers['webhook-id'] ?? null;
    $timestamp = $headers['webhook-timestamp'] ?? null;
    $signatures = $headers['webhook-signature'] ?? null;
    if ($eventId === null || $timestamp === null || $signatures === null) {
        throw new WebhookRejected('missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    if (preg_match('/^[0-9]{1,15}$/D', $timestamp) !== 1) {
        throw new WebhookRejected('malformed webhook-timestamp header (expected Unix seconds)');
    }
    if (abs(($now ?? time()) - (int) $timestamp) > WEBHOOK_TOLERANCE_SECONDS) {
        throw new WebhookRejected("webhook-timestamp is more than 5 minutes away from this server's clock");
    }
    $encoded = str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret;
    $key = base64_decode(strtr($encoded, '-_', '+/'), true);
    if ($key === false) {
        throw new WebhookRejected('the secret is not base64');
    }
    $expected = base64_encode(hash_hmac('sha256', "{$eventId}.{$timestamp}.{$rawBody}", $key, true));
    foreach (explode(' ', $signatures) as $candidate) {
        [$version, $signature] = array_pad(explode(',', $candidate, 2), 2, '');
        if ($version === 'v1' && hash_equals($expected, $signature)) { // constant time, never ==
            return authentic_event($rawBody, $eventId);
        }
    }
    throw new WebhookRejected('signature mismatch');
}

/** Authentic: only now parse the body. */
function authentic_event(string $rawBody, ?string $eventId): array
{
    try {
        $event = json_decode($rawBody, true, 512, JSON_THROW_ON_ERROR);
    } catch (JsonException) {
        throw new WebhookRejected('body is not valid JSON');
    }
    $isEvent = is_array($event) && !array_is_list($event)
        && is_string($event['id'] ?? null) && is_string($event['type'] ?? null);
    if (!$isEvent) {
        throw new WebhookRejected('body is not an event');
    }
    // The id header is not signed by the spec's scheme; the body id is. They must agree so that deduplicating on
    // either is safe.
    if ($eventId !== null && $eventId !== $event['id']) {
        throw new WebhookRejected('X-Service-Event-Id does not match the body id');
    }
    return $event;
}

/**
 * The request's headers from $_SERVER, as PHP-FPM, Apache's mod_php and the built-in server give them
 * (HTTP_X_SERVICE_SIGNATURE → X-SERVICE-SIGNATURE).
 *
 * @return array<string, string>
 */
function request_headers(): array
{
    $headers = [];
    foreach ($_SERVER as $name => $value) {
        if (is_string($name) && str_starts_with($name, 'HTTP_') && is_string($value)) {
            $headers[str_replace('_', '-', substr($name, 5))] = $value;
        }
    }
    return $headers;
}
