<?php
/**
 * The gateway settings page's own part: what connect, reconnect and "Check status" do, and the
 * panel that says whether the shop is connected, to which store, and whether payouts are set.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

final class Tender_Settings_Page {
	/** How old Tender's word on the connection may be when the settings page shows it. */
	private const STATUS_MAX_AGE_SECONDS = 300;

	/** Messages for the settings page of this request: [type, text]. */
	private static array $messages = array();

	/** After the settings were saved: connect with a pasted key, or the button's action. */
	public static function act( string $key, string $action ): void {
		try {
			if ( '' !== $key || in_array( $action, array( 'connect', 'reconnect' ), true ) ) {
				$problem = Tender_Settings::address_problem( Tender_Settings::api_base_url() );
				if ( null !== $problem ) {
					throw new RuntimeException( $problem );
				}
				$connection       = ( new Tender_Connection() )->connect( $key, Tender_Connection::site_body() );
				self::$messages[] = array( 'success', ! empty( $connection['credentials_rotated'] ) ? __( 'Reconnected: new credentials are in use.', 'tender-for-woocommerce' ) : __( 'Connected to Tender.', 'tender-for-woocommerce' ) );
			} elseif ( 'refresh' === $action && Tender_Settings::is_connected() ) {
				( new Tender_Connection() )->refresh_status();
			}
		} catch ( Throwable $failure ) {
			/* translators: %s: what went wrong. */
			self::$messages[] = array( 'error', sprintf( __( 'Not connected: %s', 'tender-for-woocommerce' ), $failure->getMessage() ) );
		}
	}

	/** The messages of this request, then the connection panel (Tender asked again when its word is old). */
	public static function status_panel(): void {
		$connection = Tender_Settings::connection();
		if ( Tender_Settings::is_connected() && ( ! isset( $connection['checked_at'] ) || time() - (int) $connection['checked_at'] > self::STATUS_MAX_AGE_SECONDS ) ) {
			try {
				( new Tender_Connection() )->refresh_status();
			} catch ( Throwable $failure ) {
				/* translators: %s: what went wrong. */
				self::$messages[] = array( 'error', sprintf( __( 'Could not check the connection: %s', 'tender-for-woocommerce' ), $failure->getMessage() ) );
			}
		}
		foreach ( self::$messages as [ $type, $text ] ) {
			printf( '<div class="notice notice-%1$s tender-message" data-tender-message="%1$s"><p>%2$s</p></div>', esc_attr( $type ), esc_html( $text ) );
		}
		echo '<div id="tender-connection" class="tender-connection">';
		self::connection_state();
		if ( null !== Tender_Settings::pending_connect() ) {
			printf(
				'<div class="notice notice-warning inline" data-tender-warning="pending"><p>%1$s <button type="submit" class="button" name="tender_action" value="connect">%2$s</button> %3$s</p></div>',
				esc_html__( 'The last connect did not finish (no answer arrived).', 'tender-for-woocommerce' ),
				esc_html__( 'Retry connect', 'tender-for-woocommerce' ),
				esc_html__( 'within 15 minutes of the first try.', 'tender-for-woocommerce' )
			);
		}
		echo '</div>';
	}

	private static function connection_state(): void {
		$connection = Tender_Settings::connection();
		if ( ! Tender_Settings::is_connected() ) {
			printf( '<p data-tender-status="not-connected"><strong>%1$s</strong> %2$s</p>', esc_html__( 'Not connected.', 'tender-for-woocommerce' ), esc_html__( 'Enter the Tender address, paste a bootstrap key and save.', 'tender-for-woocommerce' ) );
			return;
		}
		if ( 'DISCONNECTED' === ( $connection['status'] ?? '' ) ) {
			printf( '<p data-tender-status="disconnected"><strong>%1$s</strong> %2$s</p>', esc_html__( 'Disconnected at Tender.', 'tender-for-woocommerce' ), esc_html__( 'Paste a new bootstrap key and save to connect again.', 'tender-for-woocommerce' ) );
			return;
		}
		printf(
			'<p data-tender-status="connected"><strong>%1$s</strong> %2$s <code>%3$s</code></p>',
			esc_html__( 'Connected', 'tender-for-woocommerce' ),
			esc_html(
				sprintf(
					/* translators: 1: store name, 2: installation id, 3: date and time. */
					__( 'to %1$s (installation %2$s) since %3$s. Notifications come to', 'tender-for-woocommerce' ),
					(string) ( $connection['store_name'] ?? '' ),
					(string) ( $connection['installation_id'] ?? '' ),
					gmdate( 'Y-m-d H:i', (int) ( $connection['connected_at'] ?? 0 ) ) . ' UTC'
				)
			),
			esc_html( (string) ( $connection['webhook_url'] ?? '' ) )
		);
		if ( empty( $connection['payout_configured'] ) ) {
			printf( '<div class="notice notice-warning inline" data-tender-warning="payout"><p><strong>%1$s</strong> %2$s</p></div>', esc_html__( 'No payout wallet is set for this store.', 'tender-for-woocommerce' ), esc_html__( 'Tender refuses new invoices until your Tender operator sets one; buyers cannot pay with Tender until then. Press "Check status" once it is set.', 'tender-for-woocommerce' ) );
		} else {
			printf( '<p data-tender-payout="configured">%s</p>', esc_html__( 'Payouts: a payout wallet is set.', 'tender-for-woocommerce' ) );
		}
		if ( ! Tender_Settings::offers_currency( (string) get_woocommerce_currency() ) ) {
			/* translators: 1: the shop's currency, 2: the currencies Tender takes. */
			printf( '<div class="notice notice-warning inline" data-tender-warning="currency"><p>%s</p></div>', esc_html( sprintf( __( 'Tender is not offered at checkout: this shop\'s currency (%1$s) is not one Tender takes (%2$s).', 'tender-for-woocommerce' ), (string) get_woocommerce_currency(), implode( ', ', (array) $connection['supported_currencies'] ) ) ) );
		}
		printf(
			'<p><button type="submit" class="button" name="tender_action" value="refresh">%1$s</button> <button type="submit" class="button" name="tender_action" value="reconnect">%2$s</button></p>',
			esc_html__( 'Check status', 'tender-for-woocommerce' ),
			esc_html__( 'Reconnect (re-issue credentials)', 'tender-for-woocommerce' )
		);
	}
}
