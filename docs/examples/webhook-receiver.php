<?php
/**
 * A webhook receiver in plain PHP: the script your web server runs for the webhook URL (PHP-FPM, Apache), or,
 * to try it, PHP's built-in server:
 *
 *     WEBHOOK_SECRET=whsec_… php -S 127.0.0.1:8000 webhook-receiver.php
 *
 * With WEBHOOK_SIGNATURE=standard it checks the Standard Webhooks headers instead (verify_standard_webhook()).
 *
 * It answers 204 to an authentic event and 401 to anything else, and logs one line per request (error_log).
 * The test suite runs it against real deliveries (test/docs/receiver-examples.test.ts).
 */

declare(strict_types=1);

require __DIR__ . '/verify-webhook.php';

if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    http_response_code(405);
    header('Allow: POST');
    exit;
}

$secret = getenv('WEBHOOK_SECRET') ?: '';
if (!str_starts_with($secret, 'whsec_')) {
    error_log("set WEBHOOK_SECRET to the endpoint's secret (whsec_…), as POST /api/partners/webhooks returned it");
    http_response_code(500);
    exit;
}

$rawBody = (string) file_get_contents('php://input'); // the raw body: never $_POST, never json_decode first
try {
    $event = getenv('WEBHOOK_SIGNATURE') === 'standard'
        ? verify_standard_webhook(request_headers(), $rawBody, $secret)
        : verify_webhook(request_headers(), $rawBody, $secret);
} catch (WebhookRejected $rejected) {
    error_log('rejected: ' . $rejected->getMessage());
    http_response_code(401);
    header('Content-Type: text/plain; charset=utf-8');
    echo $rejected->getMessage();
    exit;
}

error_log("accepted {$event['id']} {$event['type']}");
// Store the event here, deduplicated by $event['id'], and process it after answering (guide §4, §7).
http_response_code(204);
