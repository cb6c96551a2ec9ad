<?php
/**
 * Where the plugin keeps what connect returned. The dedicated key, the webhook secret and the
 * `int_` id live in the options table only (not autoloaded), and are never written to a log, an
 * order note or a URL.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Settings {
	public const GATEWAY_SETTINGS = 'woocommerce_tender_settings';
	public const API_KEY          = 'tender_api_key';
	public const WEBHOOK_SECRET   = 'tender_webhook_secret';
	public const INTEGRATION_ID   = 'tender_integration_public_id';
	public const CONNECTION       = 'tender_connection';
	public const PENDING_CONNECT  = 'tender_pending_connect';
	public const REFUNDS_PROBE    = 'tender_refunds_available';
	public const VERSION          = 'tender_plugin_version';
	public const RECONCILED       = 'tender_reconciled_at';
	/** Every option the plugin writes: uninstall deletes them all. */
	public const ALL_OPTIONS = array( self::GATEWAY_SETTINGS, self::API_KEY, self::WEBHOOK_SECRET, self::INTEGRATION_ID, self::CONNECTION, self::PENDING_CONNECT, self::REFUNDS_PROBE, self::VERSION, self::RECONCILED );

	/** Tender's address from the gateway's settings, without a trailing slash. */
	public static function api_base_url(): string {
		$settings = get_option( self::GATEWAY_SETTINGS, array() );
		return rtrim( trim( (string) ( is_array( $settings ) ? ( $settings['api_base_url'] ?? '' ) : '' ) ), '/' );
	}

	/**
	 * Why a Tender address cannot be used, or null: keys travel to it, so https:// only (plain
	 * http:// for this machine itself, 127.0.0.1 / ::1 / localhost, as in development).
	 */
	public static function address_problem( string $url ): ?string {
		$parts = wp_parse_url( $url );
		$host  = strtolower( trim( (string) ( $parts['host'] ?? '' ), '[]' ) );
		if ( false === $parts || '' === $host || isset( $parts['user'] ) || isset( $parts['query'] ) || isset( $parts['fragment'] ) ) {
			return __( 'Enter the Tender address as https://host (nothing after the host but an optional path).', 'tender-for-woocommerce' );
		}
		$scheme = strtolower( (string) ( $parts['scheme'] ?? '' ) );
		if ( 'https' === $scheme || ( 'http' === $scheme && in_array( $host, array( '127.0.0.1', '::1', 'localhost' ), true ) ) ) {
			return null;
		}
		return __( 'The Tender address must start with https:// (the plugin\'s key is sent to it).', 'tender-for-woocommerce' );
	}

	public static function api_key(): string {
		return (string) get_option( self::API_KEY, '' );
	}

	public static function webhook_secret(): string {
		return (string) get_option( self::WEBHOOK_SECRET, '' );
	}

	public static function integration_id(): string {
		return (string) get_option( self::INTEGRATION_ID, '' );
	}

	public static function is_connected(): bool {
		return '' !== self::api_key() && '' !== self::webhook_secret() && '' !== self::integration_id();
	}

	/** What connect said about the installation (no secrets): store, ids, URLs, payout readiness. */
	public static function connection(): array {
		$connection = get_option( self::CONNECTION, array() );
		return is_array( $connection ) ? $connection : array();
	}

	/**
	 * Keep a connect answer: the three credentials apart, the rest as the connection summary.
	 */
	public static function save_connection( array $answer, int $now ): void {
		foreach ( array( 'api_key', 'webhook_secret', 'integration_public_id' ) as $field ) {
			if ( ! is_string( $answer[ $field ] ?? null ) || '' === $answer[ $field ] ) {
				/* translators: %s: the missing field's name. */
				throw new UnexpectedValueException( sprintf( __( 'Tender\'s connect answer has no %s.', 'tender-for-woocommerce' ), $field ) );
			}
		}
		update_option( self::API_KEY, $answer['api_key'], false );
		update_option( self::WEBHOOK_SECRET, $answer['webhook_secret'], false );
		update_option( self::INTEGRATION_ID, $answer['integration_public_id'], false );
		$summary = array_intersect_key(
			$answer,
			array_flip( array( 'store_id', 'store_name', 'installation_id', 'site_url', 'webhook_url', 'status', 'payout_configured', 'warning', 'checkout_base_url', 'credentials_rotated' ) )
		);
		$summary['connected_at'] = $now;
		// Same Tender, same currencies: kept until the next status answer says otherwise.
		$summary['supported_currencies'] = self::connection()['supported_currencies'] ?? null;
		update_option( self::CONNECTION, $summary, false );
		delete_option( self::REFUNDS_PROBE );
	}

	/**
	 * May Tender be offered for an order in this currency? Tender's status answer lists what it
	 * prices invoices in; before the first answer that lists them (or from a Tender that does not
	 * list them), the currency is not checked.
	 */
	public static function offers_currency( string $currency ): bool {
		$supported = self::connection()['supported_currencies'] ?? null;
		return ! is_array( $supported ) || in_array( strtoupper( $currency ), $supported, true );
	}

	public static function update_connection( array $changes ): void {
		update_option( self::CONNECTION, array_merge( self::connection(), $changes ), false );
	}

	public static function forget_connection(): void {
		foreach ( array( self::API_KEY, self::WEBHOOK_SECRET, self::INTEGRATION_ID, self::CONNECTION, self::PENDING_CONNECT, self::REFUNDS_PROBE ) as $option ) {
			delete_option( $option );
		}
	}

	/**
	 * A connect whose answer never arrived: the exact request to send again (Tender accepts the
	 * same key with the same site_url and webhook_url for a while, and re-issues credentials).
	 */
	public static function pending_connect( ?int $now = null ): ?array {
		$pending = get_option( self::PENDING_CONNECT, null );
		if ( ! is_array( $pending ) ) {
			return null;
		}
		if ( ( $now ?? time() ) - (int) $pending['started_at'] >= Tender_Connection::RETRY_WINDOW_SECONDS ) {
			self::clear_pending_connect();   // Tender no longer accepts it: the key is not kept
			return null;
		}
		return $pending;
	}

	public static function remember_pending_connect( string $key, array $body, int $now ): void {
		update_option(
			self::PENDING_CONNECT,
			array(
				'key'        => $key,
				'body'       => $body,
				'started_at' => $now,
			),
			false
		);
	}

	public static function clear_pending_connect(): void {
		delete_option( self::PENDING_CONNECT );
	}
}
