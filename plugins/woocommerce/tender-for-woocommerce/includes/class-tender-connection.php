<?php
/**
 * Connect, reconnect (credential rotation), status and disconnect.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Connection {
	/** How long Tender accepts the same connect again after its answer was lost. */
	public const RETRY_WINDOW_SECONDS = 15 * 60;

	/** @var callable(string): Tender_Api */
	private $api_for_key;

	/**
	 * @param callable|null $api_for_key key → Tender_Api (tests pass one with their own transport).
	 * @param callable|null $clock       () → unix seconds.
	 */
	public function __construct( ?callable $api_for_key = null, private $clock = null ) {
		$this->api_for_key = $api_for_key ?? static fn ( string $key ) => new Tender_Api( Tender_Settings::api_base_url(), $key );
		$this->clock       = $clock ?? 'time';
	}

	/**
	 * What this site sends at connect: its homepage and the address deliveries come to.
	 */
	public static function site_body(): array {
		return array(
			'site_url'            => untrailingslashit( home_url() ),
			'webhook_url'         => WC()->api_request_url( 'tender' ),
			'plugin_version'      => TENDER_PLUGIN_VERSION,
			'cms_version'         => (string) get_bloginfo( 'version' ),
			'woocommerce_version' => (string) ( WC()->version ?? '' ),
		);
	}

	/**
	 * Connect with a pasted bootstrap key, or (no key) reconnect with the current dedicated key,
	 * which re-issues both credentials. A connect whose answer was lost is sent again exactly as
	 * it was (same key, same site_url and webhook_url), which Tender answers with fresh credentials.
	 *
	 * @return array The connection summary (no secrets).
	 * @throws Tender_Api_Error|RuntimeException When it did not connect; the message says what to do.
	 */
	public function connect( string $pasted_key, array $site_body ): array {
		$now     = ( $this->clock )();
		$pending = Tender_Settings::pending_connect( $now );
		$pasted  = trim( $pasted_key );
		if ( null !== $pending && ( '' === $pasted || hash_equals( $pending['key'], $pasted ) ) ) {
			[ $key, $body ] = array( $pending['key'], $pending['body'] );   // the lost connect, again
		} elseif ( '' !== $pasted ) {
			[ $key, $body ] = array( $pasted, $site_body );
		} elseif ( Tender_Settings::is_connected() ) {
			[ $key, $body ] = array( Tender_Settings::api_key(), $site_body );   // rotation
		} else {
			throw new RuntimeException( __( 'Paste the bootstrap key your Tender operator gave you, then save.', 'tender-for-woocommerce' ) );
		}
		Tender_Settings::remember_pending_connect( $key, $body, $now );
		try {
			$answer = ( $this->api_for_key )( $key )->connect( $body );
		} catch ( Tender_Api_Error $error ) {
			if ( $error->answer_lost() ) {
				throw new RuntimeException( $error->getMessage() . ' ' . __( 'The connection may or may not have been made: press "Retry connect" within 15 minutes (the same key is accepted once more).', 'tender-for-woocommerce' ), 0, $error );
			}
			Tender_Settings::clear_pending_connect();
			if ( 401 === $error->status && Tender_Settings::is_connected() && hash_equals( Tender_Settings::api_key(), $key ) ) {
				// The stored key itself is refused (revoked, or spent by a reconnect whose answer was
				// lost): the connection is gone, and a new bootstrap key is the way back.
				Tender_Settings::forget_connection();
				throw new RuntimeException( self::key_refused(), 0, $error );
			}
			throw $error;
		}
		Tender_Settings::save_connection( $answer, $now );
		Tender_Settings::clear_pending_connect();
		return Tender_Settings::connection();
	}

	private static function key_refused(): string {
		return __( 'Tender no longer accepts this shop\'s key. Paste a new bootstrap key to connect again.', 'tender-for-woocommerce' );
	}

	/**
	 * Tender's current word on the installation (payout readiness may change after connect).
	 */
	public function refresh_status(): array {
		try {
			$status = ( $this->api_for_key )( Tender_Settings::api_key() )->status();
		} catch ( Tender_Api_Error $error ) {
			if ( 401 === $error->status ) {
				Tender_Settings::forget_connection();   // revoked at Tender: nothing here works any more
				throw new RuntimeException( self::key_refused(), 0, $error );
			}
			throw $error;
		}
		Tender_Settings::update_connection(
			array(
				'status'            => $status['status'] ?? null,
				'payout_configured' => (bool) ( $status['payout_configured'] ?? false ),
				'store_name'        => $status['store_name'] ?? ( Tender_Settings::connection()['store_name'] ?? null ),
				// Absent from older Tenders: then the shop's currency is not checked (null).
				'supported_currencies' => is_array( $status['supported_currencies'] ?? null ) ? array_values( array_map( 'strval', $status['supported_currencies'] ) ) : null,
				'checked_at'        => ( $this->clock )(),
			)
		);
		return $status;
	}

	/**
	 * Disconnect at Tender (the dedicated key is revoked, nothing more is delivered) and forget
	 * the credentials here, whatever Tender answered.
	 */
	public function disconnect(): void {
		if ( Tender_Settings::is_connected() && '' !== Tender_Settings::api_base_url() ) {
			try {
				( $this->api_for_key )( Tender_Settings::api_key() )->disconnect();
			} catch ( Tender_Api_Error $error ) {
				// Already disconnected, or Tender unreachable: the credentials go anyway.
				unset( $error );
			}
		}
		Tender_Settings::forget_connection();
	}

}
