<?php
/**
 * The Checkout Blocks payment method: the block checkout calls the same gateway's process_payment
 * and sends the buyer to the redirect it returns (Tender's hosted checkout).
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

use Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType;

final class Tender_Blocks_Payment_Method extends AbstractPaymentMethodType {
	protected $name = 'tender';

	public function initialize() {
		$settings       = get_option( Tender_Settings::GATEWAY_SETTINGS, array() );
		$this->settings = is_array( $settings ) ? $settings : array();
	}

	public function is_active() {
		return 'yes' === $this->get_setting( 'enabled', 'no' ) && Tender_Settings::is_connected();
	}

	public function get_payment_method_script_handles() {
		wp_register_script(
			'tender-blocks',
			plugins_url( 'assets/js/blocks.js', TENDER_PLUGIN_FILE ),
			array( 'wc-blocks-registry', 'wc-settings', 'wp-element' ),
			TENDER_PLUGIN_VERSION,
			true
		);
		return array( 'tender-blocks' );
	}

	public function get_payment_method_data() {
		return array(
			'title'       => $this->get_setting( 'title', 'Crypto (Tender)' ),
			'description' => $this->get_setting( 'description', '' ),
			'supports'    => array( 'products' ),
		);
	}
}
