<?php
/**
 * ?wc-api=tender: where Tender delivers this installation's events.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Webhook_Endpoint {
	/** The X-Tender-* headers of this request, by their HTTP names. */
	public static function request_headers( array $server ): array {
		$headers = array();
		foreach ( array( 'Timestamp', 'Signature', 'Integration-Id', 'Event-Id', 'Event-Type', 'Delivery-Id' ) as $name ) {
			$key = 'HTTP_X_TENDER_' . strtoupper( str_replace( '-', '_', $name ) );
			if ( isset( $server[ $key ] ) ) {
				$headers[ "X-Tender-$name" ] = (string) $server[ $key ];
			}
		}
		return $headers;
	}

	/**
	 * The receiver for this site's stored credentials; deliveries re-read the invoice with the
	 * dedicated key before any order changes.
	 */
	public static function receiver(): Tender_Receiver {
		$sync = new Tender_Order_Sync( new Tender_Api( Tender_Settings::api_base_url(), Tender_Settings::api_key() ) );
		return new Tender_Receiver( Tender_Settings::webhook_secret(), Tender_Settings::integration_id(), array( $sync, 'handle_event' ), new Tender_Seen_Events() );
	}

	/** woocommerce_api_tender: answer and end the request. */
	public static function handle_request(): void {
		if ( 'POST' !== ( $_SERVER['REQUEST_METHOD'] ?? '' ) ) {
			self::answer( 405, array( 'error' => 'POST only' ) ); // no-i18n: a protocol answer to Tender
		}
		try {
			[ $status, $answer ] = self::receiver()->handle( self::request_headers( $_SERVER ), (string) file_get_contents( 'php://input' ) );
		} catch ( Throwable $failure ) {
			// The seen-events table itself failed: not handled, so Tender retries.
			[ $status, $answer ] = array( 500, array( 'error' => 'the action failed; retry' ) ); // no-i18n: a protocol answer to Tender
		}
		self::answer( $status, $answer );
	}

	private static function answer( int $status, array $body ): never {
		status_header( $status );
		header( 'Content-Type: application/json; charset=utf-8' );
		header( 'Cache-Control: no-store' );
		echo wp_json_encode( $body );
		exit;
	}
}
