<?php
/**
 * The WooCommerce payment gateway: settings and connection, checkout, admin refunds.
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

class Tender_Gateway extends WC_Payment_Gateway {
	public const ID              = 'tender';
	private const REFUND_SEQ     = '_tender_refund_sequence';

	/** Messages for the settings page of this request: [type, text]. */
	private static array $messages = array();

	public function __construct() {
		$this->id                 = self::ID;
		$this->has_fields         = false;
		$this->method_title       = 'Tender (crypto)';
		$this->method_description = 'Take crypto payments through Tender: each order gets a Tender invoice, the buyer pays on Tender\'s hosted checkout, and the order is marked paid when Tender confirms the payment.';
		$this->supports           = array( 'products' );
		$this->init_form_fields();
		$this->init_settings();
		$this->title       = (string) $this->get_option( 'title' );
		$this->description = (string) $this->get_option( 'description' );
		// The refund button only where the connected Tender has the refunds API (asked in the admin only).
		if ( is_admin() && self::refunds()->available() ) {
			$this->supports[] = 'refunds';
		}
		add_action( 'woocommerce_update_options_payment_gateways_' . $this->id, array( $this, 'process_admin_options' ) );
	}

	public function init_form_fields() {
		$this->form_fields = array(
			'enabled'       => array(
				'title'   => 'Enable/Disable',
				'type'    => 'checkbox',
				'label'   => 'Offer crypto payments through Tender at checkout',
				'default' => 'no',
			),
			'title'         => array(
				'title'       => 'Title',
				'type'        => 'text',
				'description' => 'What the buyer sees at checkout.',
				'default'     => 'Crypto (Tender)',
			),
			'description'   => array(
				'title'       => 'Description',
				'type'        => 'textarea',
				'description' => 'Shown under the title at checkout.',
				'default'     => 'Pay with crypto on Tender\'s secure checkout page.',
			),
			'api_base_url'  => array(
				'title'       => 'Tender address',
				'type'        => 'text',
				'description' => 'The address of your Tender service, e.g. https://pay.example.com.',
				'default'     => '',
			),
			'bootstrap_key' => array(
				'title'       => 'Bootstrap key',
				'type'        => 'password',
				'description' => 'Paste the one-time bootstrap key from your Tender operator and save: the plugin connects and the key is not kept.',
				'default'     => '',
			),
		);
	}

	private static function api(): Tender_Api {
		return new Tender_Api( Tender_Settings::api_base_url(), Tender_Settings::api_key() );
	}

	private static function refunds(): Tender_Refunds {
		return new Tender_Refunds( self::api() );
	}

	public function is_available() {
		return parent::is_available() && Tender_Settings::is_connected();
	}

	/**
	 * Save the settings; connect when a bootstrap key was pasted, or on "Reconnect" / "Retry".
	 */
	public function process_admin_options() {
		$field  = $this->get_field_key( 'bootstrap_key' );
		$posted = $this->get_post_data();
		$key    = trim( (string) ( $posted[ $field ] ?? '' ) );
		$action = sanitize_key( (string) ( $posted['tender_action'] ?? '' ) );
		// The bootstrap key is used once, now; it is never saved with the settings.
		$posted[ $field ] = '';
		$this->set_post_data( $posted );
		$saved = parent::process_admin_options();
		try {
			if ( '' !== $key || in_array( $action, array( 'connect', 'reconnect' ), true ) ) {
				$problem = Tender_Settings::address_problem( Tender_Settings::api_base_url() );
				if ( null !== $problem ) {
					throw new RuntimeException( $problem );
				}
				$connection = ( new Tender_Connection() )->connect( $key, Tender_Connection::site_body() );
				self::$messages[] = array( 'success', ( ! empty( $connection['credentials_rotated'] ) ? 'Reconnected: new credentials are in use.' : 'Connected to Tender.' ) );
			} elseif ( 'refresh' === $action && Tender_Settings::is_connected() ) {
				( new Tender_Connection() )->refresh_status();
			}
		} catch ( Throwable $failure ) {
			self::$messages[] = array( 'error', 'Not connected: ' . $failure->getMessage() );
		}
		return $saved;
	}

	/** How old Tender's word on the connection may be when the settings page shows it. */
	private const STATUS_MAX_AGE_SECONDS = 300;

	/** The settings page: connection and payout status first, then the fields. */
	public function admin_options() {
		$connection = Tender_Settings::connection();
		if ( Tender_Settings::is_connected() && time() - (int) ( $connection['checked_at'] ?? $connection['connected_at'] ?? 0 ) > self::STATUS_MAX_AGE_SECONDS ) {
			try {
				( new Tender_Connection() )->refresh_status();
			} catch ( Throwable $failure ) {
				self::$messages[] = array( 'error', 'Could not check the connection: ' . $failure->getMessage() );
			}
		}
		echo '<h2>' . esc_html( $this->get_method_title() ) . '</h2>';
		echo wp_kses_post( wpautop( $this->get_method_description() ) );
		foreach ( self::$messages as [ $type, $text ] ) {
			printf( '<div class="notice notice-%s tender-message" data-tender-message="%s"><p>%s</p></div>', esc_attr( $type ), esc_attr( $type ), esc_html( $text ) );
		}
		$this->connection_panel();
		echo '<table class="form-table">';
		$this->generate_settings_html( $this->get_form_fields() );
		echo '</table>';
	}

	private function connection_panel(): void {
		$connection = Tender_Settings::connection();
		$pending    = Tender_Settings::pending_connect();
		echo '<div id="tender-connection" class="tender-connection">';
		if ( Tender_Settings::is_connected() && 'DISCONNECTED' === ( $connection['status'] ?? '' ) ) {
			echo '<p data-tender-status="disconnected"><strong>Disconnected at Tender.</strong> Paste a new bootstrap key and save to connect again.</p>';
		} elseif ( Tender_Settings::is_connected() ) {
			printf(
				'<p data-tender-status="connected"><strong>Connected</strong> to %s (installation %s) since %s. Notifications come to <code>%s</code>.</p>',
				esc_html( (string) ( $connection['store_name'] ?? '' ) ),
				esc_html( (string) ( $connection['installation_id'] ?? '' ) ),
				esc_html( gmdate( 'Y-m-d H:i', (int) ( $connection['connected_at'] ?? 0 ) ) . ' UTC' ),
				esc_html( (string) ( $connection['webhook_url'] ?? '' ) )
			);
			if ( empty( $connection['payout_configured'] ) ) {
				echo '<div class="notice notice-warning inline" data-tender-warning="payout"><p><strong>No payout wallet is set for this store.</strong> Tender refuses new invoices until your Tender operator sets one; buyers cannot pay with Tender until then. Press "Check status" once it is set.</p></div>';
			} else {
				echo '<p data-tender-payout="configured">Payouts: a payout wallet is set.</p>';
			}
			echo '<p><button type="submit" class="button" name="tender_action" value="refresh">Check status</button> ';
			echo '<button type="submit" class="button" name="tender_action" value="reconnect">Reconnect (re-issue credentials)</button></p>';
		} else {
			echo '<p data-tender-status="not-connected"><strong>Not connected.</strong> Enter the Tender address, paste a bootstrap key and save.</p>';
		}
		if ( null !== $pending ) {
			echo '<div class="notice notice-warning inline" data-tender-warning="pending"><p>The last connect did not finish (no answer arrived). <button type="submit" class="button" name="tender_action" value="connect">Retry connect</button> within 15 minutes of the first try.</p></div>';
		}
		echo '</div>';
	}

	public function process_payment( $order_id ) {
		$order = wc_get_order( $order_id );
		if ( ! $order || ! Tender_Settings::is_connected() ) {
			wc_add_notice( 'Crypto payment is not available right now. Please choose another payment method.', 'error' );
			return array( 'result' => 'failure' );
		}
		try {
			$invoice = ( new Tender_Checkout( self::api() ) )->invoice_for( $order, $this->get_return_url( $order ) );
		} catch ( Tender_Stale_Invoice $stale ) {
			$order->add_order_note( sprintf( 'Tender: the order changed after its invoice %s was made (%s %s); that invoice is still open at Tender, so the buyer was not sent to it. A new invoice can be made once it expires.', $stale->invoice['id'] ?? '?', $stale->invoice['amount'] ?? '?', $stale->invoice['currency'] ?? '?' ) );
			wc_add_notice( 'This order changed since its crypto payment was started. Please try again later or choose another payment method.', 'error' );
			return array( 'result' => 'failure' );
		} catch ( Tender_Api_Error $error ) {
			$text = 'payout_wallet_not_configured' === $error->error_code
				? 'This shop cannot take crypto payments yet. Please choose another payment method.'
				: 'The crypto payment could not be started. Please try again in a moment.';
			$order->add_order_note( 'Tender: the invoice could not be created (' . ( '' !== $error->error_code ? $error->error_code : 'HTTP ' . $error->status ) . ').' );
			wc_add_notice( $text, 'error' );
			return array( 'result' => 'failure' );
		}
		return array(
			'result'   => 'success',
			'redirect' => (string) $invoice['checkout_url'],
		);
	}

	public function can_refund_order( $order ) {
		return parent::can_refund_order( $order ) && '' !== (string) $order->get_meta( Tender_Order_Sync::INVOICE_META );
	}

	public function process_refund( $order_id, $amount = null, $reason = '' ) {
		$order = wc_get_order( $order_id );
		if ( ! $order || null === $amount ) {
			return new WP_Error( 'tender_refund', 'Enter the amount to refund.' );
		}
		$sequence = (int) $order->get_meta( self::REFUND_SEQ );
		try {
			self::refunds()->refund( $order, (string) $amount, (string) $reason, $sequence );
		} catch ( Throwable $failure ) {
			return new WP_Error( 'tender_refund', 'Tender did not accept the refund: ' . $failure->getMessage() );
		}
		$order->update_meta_data( self::REFUND_SEQ, (string) ( $sequence + 1 ) );
		$order->save();
		return true;
	}
}
