<?php
/**
 * The WooCommerce payment gateway: settings and connection, checkout, admin refunds.
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

class Tender_Gateway extends WC_Payment_Gateway {
	public const ID          = 'tender';
	private const REFUND_SEQ = '_tender_refund_sequence';

	public function __construct() {
		$this->id                 = self::ID;
		$this->has_fields         = false;
		$this->method_title       = __( 'Tender (crypto)', 'tender-for-woocommerce' );
		$this->method_description = __( 'Take crypto payments through Tender: each order gets a Tender invoice, the buyer pays on Tender\'s hosted checkout, and the order is marked paid when Tender confirms the payment.', 'tender-for-woocommerce' );
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
				'title'   => __( 'Enable/Disable', 'tender-for-woocommerce' ),
				'type'    => 'checkbox',
				'label'   => __( 'Offer crypto payments through Tender at checkout', 'tender-for-woocommerce' ),
				'default' => 'no',
			),
			'title'         => array(
				'title'       => __( 'Title', 'tender-for-woocommerce' ),
				'type'        => 'text',
				'description' => __( 'What the buyer sees at checkout.', 'tender-for-woocommerce' ),
				'default'     => __( 'Crypto (Tender)', 'tender-for-woocommerce' ),
			),
			'description'   => array(
				'title'       => __( 'Description', 'tender-for-woocommerce' ),
				'type'        => 'textarea',
				'description' => __( 'Shown under the title at checkout.', 'tender-for-woocommerce' ),
				'default'     => __( 'Pay with crypto on Tender\'s secure checkout page.', 'tender-for-woocommerce' ),
			),
			'api_base_url'  => array(
				'title'       => __( 'Tender address', 'tender-for-woocommerce' ),
				'type'        => 'text',
				'description' => __( 'The address of your Tender service, e.g. https://pay.example.com.', 'tender-for-woocommerce' ),
				'default'     => '',
			),
			'bootstrap_key' => array(
				'title'       => __( 'Bootstrap key', 'tender-for-woocommerce' ),
				'type'        => 'password',
				'description' => __( 'Paste the one-time bootstrap key from your Tender operator and save: the plugin connects and the key is not kept.', 'tender-for-woocommerce' ),
				'default'     => '',
			),
		);
	}

	public static function api(): Tender_Api {
		return new Tender_Api( Tender_Settings::api_base_url(), Tender_Settings::api_key() );
	}

	private static function refunds(): Tender_Refunds {
		return new Tender_Refunds( self::api() );
	}

	/** Offered while connected, and only for a shop currency Tender prices invoices in. */
	public function is_available() {
		return parent::is_available() && Tender_Settings::is_connected() && Tender_Settings::offers_currency( (string) get_woocommerce_currency() );
	}

	/**
	 * Save the settings; connect when a bootstrap key was pasted, or on "Reconnect" / "Retry".
	 * WooCommerce checks the settings form's nonce before this runs; the capability is checked here too.
	 */
	public function process_admin_options() {
		if ( ! current_user_can( 'manage_woocommerce' ) ) {
			return false;
		}
		$field  = $this->get_field_key( 'bootstrap_key' );
		$posted = $this->get_post_data();
		$key    = trim( (string) ( $posted[ $field ] ?? '' ) );
		$action = sanitize_key( (string) ( $posted['tender_action'] ?? '' ) );
		// The bootstrap key is used once, now; it is never saved with the settings.
		$posted[ $field ] = '';
		$this->set_post_data( $posted );
		$saved = parent::process_admin_options();
		Tender_Settings_Page::act( $key, $action );
		return $saved;
	}

	/** The settings page: connection and payout status first, then the fields. */
	public function admin_options() {
		echo '<h2>' . esc_html( $this->get_method_title() ) . '</h2>';
		echo wp_kses_post( wpautop( $this->get_method_description() ) );
		Tender_Settings_Page::status_panel();
		echo '<table class="form-table">';
		$this->generate_settings_html( $this->get_form_fields() );
		echo '</table>';
	}

	public function process_payment( $order_id ) {
		$order = wc_get_order( $order_id );
		if ( ! $order || ! Tender_Settings::is_connected() ) {
			wc_add_notice( __( 'Crypto payment is not available right now. Please choose another payment method.', 'tender-for-woocommerce' ), 'error' );
			return array( 'result' => 'failure' );
		}
		try {
			$invoice = ( new Tender_Checkout( self::api() ) )->invoice_for( $order, $this->get_return_url( $order ) );
		} catch ( Tender_Stale_Invoice $stale ) {
			/* translators: 1: invoice id, 2: its amount, 3: its currency. */
			$order->add_order_note( sprintf( __( 'Tender: the order changed after its invoice %1$s was made (%2$s %3$s); that invoice is still open at Tender, so the buyer was not sent to it. A new invoice can be made once it expires.', 'tender-for-woocommerce' ), (string) ( $stale->invoice['id'] ?? '?' ), (string) ( $stale->invoice['amount'] ?? '?' ), (string) ( $stale->invoice['currency'] ?? '?' ) ) );
			wc_add_notice( __( 'This order changed since its crypto payment was started. Please try again later or choose another payment method.', 'tender-for-woocommerce' ), 'error' );
			return array( 'result' => 'failure' );
		} catch ( Tender_Api_Error | InvalidArgumentException $error ) {
			$code = $error instanceof Tender_Api_Error ? ( '' !== $error->error_code ? $error->error_code : 'HTTP ' . $error->status ) : $error->getMessage();
			$text = $error instanceof Tender_Api_Error && 'payout_wallet_not_configured' === $error->error_code
				? __( 'This shop cannot take crypto payments yet. Please choose another payment method.', 'tender-for-woocommerce' )
				: __( 'The crypto payment could not be started. Please try again in a moment.', 'tender-for-woocommerce' );
			/* translators: %s: Tender's error code, or what was wrong with the order. */
			$order->add_order_note( sprintf( __( 'Tender: the invoice could not be created (%s).', 'tender-for-woocommerce' ), $code ) );
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
			return new WP_Error( 'tender_refund', __( 'Enter the amount to refund.', 'tender-for-woocommerce' ) );
		}
		$sequence = (int) $order->get_meta( self::REFUND_SEQ );
		try {
			self::refunds()->refund( $order, (string) $amount, (string) $reason, $sequence );
		} catch ( Throwable $failure ) {
			/* translators: %s: Tender's answer. */
			return new WP_Error( 'tender_refund', sprintf( __( 'Tender did not accept the refund: %s', 'tender-for-woocommerce' ), $failure->getMessage() ) );
		}
		$order->update_meta_data( self::REFUND_SEQ, (string) ( $sequence + 1 ) );
		$order->save();
		return true;
	}
}
