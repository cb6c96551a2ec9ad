<?php
/**
 * Receiver rules 4-6 for Tender's deliveries, the same recipe (and the same answers) as Tender's
 * Python kit (kit/tender_receiver.py), checked against the same test vectors:
 *
 * 1. X-Tender-Signature: "v1=<hex>[,v1=<hex>]", each HMAC-SHA256 keyed with the webhook secret's
 *    UTF-8 bytes over "{X-Tender-Timestamp}.{raw body}"; any v1 value may match (two are sent for
 *    24 hours after a reconnect re-issued the secret). Compared in constant time.
 * 2. X-Tender-Integration-Id must be the int_ id stored at connect (a delivery meant for another
 *    installation is refused).
 * 3. X-Tender-Timestamp within 300 seconds of this server's clock (no replays).
 * 4. The event id is claimed before acting: a repeat answers {"duplicate": true} and runs nothing;
 *    a failed action releases the claim and answers 500, so Tender's retry acts.
 *
 * Plain PHP: no WordPress function is called here.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

/** A delivery that must not be acted on; $status is what to answer. */
class Tender_Rejected extends RuntimeException {
	public function __construct( public readonly int $status, string $reason ) {
		parent::__construct( $reason );
	}
}

/** Remembers which event ids were acted on. claim() must be atomic. */
interface Tender_Seen_Store {
	public function claim( string $event_id ): bool;

	public function release( string $event_id ): void;
}

class Tender_Receiver {
	public const TOLERANCE_SECONDS = 300;

	/** The hex HMAC-SHA256 Tender puts after "v1=". */
	public static function sign( string $secret, int|string $timestamp, string $body ): string {
		return hash_hmac( 'sha256', ( (string) (int) $timestamp ) . '.' . $body, $secret );
	}

	/**
	 * The verified event (the decoded body), or Tender_Rejected.
	 *
	 * @param array  $headers Header name => value; names in any case ("X-Tender-Timestamp").
	 * @param string $body    The raw body as received: re-encoded JSON would not match.
	 */
	public static function verify( array $headers, string $body, string $secret, string $integration_id, int|float $now, int $tolerance = self::TOLERANCE_SECONDS ): array {
		$headers   = array_change_key_case( $headers, CASE_LOWER );
		$timestamp = (string) ( $headers['x-tender-timestamp'] ?? '' );
		if ( '' === $timestamp || ! ctype_digit( $timestamp ) ) {
			throw new Tender_Rejected( 400, 'missing or malformed X-Tender-Timestamp' ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		$expected = self::sign( $secret, $timestamp, $body );
		$valid    = false;
		foreach ( explode( ',', (string) ( $headers['x-tender-signature'] ?? '' ) ) as $part ) {
			$part = trim( $part );
			// Every value is compared (no early exit), each in constant time.
			if ( str_starts_with( $part, 'v1=' ) && hash_equals( $expected, substr( $part, 3 ) ) ) {
				$valid = true;
			}
		}
		if ( ! $valid || '' === $secret ) {
			throw new Tender_Rejected( 401, 'signature does not match' ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		if ( '' === $integration_id || ! hash_equals( $integration_id, (string) ( $headers['x-tender-integration-id'] ?? '' ) ) ) {
			throw new Tender_Rejected( 403, "X-Tender-Integration-Id is not this installation's" ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		if ( abs( $now - (int) $timestamp ) > $tolerance ) {
			// Signed, but old (or from the future): a replay of a captured delivery.
			throw new Tender_Rejected( 401, "timestamp is more than $tolerance seconds off" ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		$event = json_decode( $body, true );
		if ( JSON_ERROR_NONE !== json_last_error() ) {
			throw new Tender_Rejected( 400, 'body is not JSON' ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		if ( ! is_array( $event ) || ! is_string( $event['id'] ?? null ) ) {
			throw new Tender_Rejected( 400, 'body is not a Tender event' ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		if ( ( $headers['x-tender-event-id'] ?? null ) !== $event['id'] ) {
			throw new Tender_Rejected( 400, "X-Tender-Event-Id does not match the body's id" ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		return $event;
	}

	/**
	 * @param callable(array): void $on_event Runs once per event id; throwing means "not done".
	 */
	public function __construct( private string $secret, private string $integration_id, private $on_event, private Tender_Seen_Store $seen, private $clock = null ) {
		$this->clock = $clock ?? 'time';
	}

	/**
	 * Verify, dedupe, act: [HTTP status, the answer to send as JSON].
	 */
	public function handle( array $headers, string $body ): array {
		try {
			$event = self::verify( $headers, $body, $this->secret, $this->integration_id, ( $this->clock )() );
		} catch ( Tender_Rejected $refusal ) {
			return array( $refusal->status, array( 'error' => $refusal->getMessage() ) );
		}
		if ( ! $this->seen->claim( $event['id'] ) ) {
			return array( 200, array( 'duplicate' => true ) );
		}
		try {
			( $this->on_event )( $event );
		} catch ( Throwable $failure ) {
			// Not done: forget the claim so Tender's retry runs the action.
			$this->seen->release( $event['id'] );
			return array( 500, array( 'error' => 'the action failed; retry' ) ); // no-i18n: a protocol answer to Tender, the kit's words
		}
		return array( 200, array( 'received' => true ) );
	}
}
