<?php
/**
 * The Checkout Blocks payment method: the block checkout calls the same gateway's process_payment
 * and sends the buyer to the redirect it returns (Tender's hosted checkout).
 *
 * @package Tender
 */

declare(strict_types=1);

defined( 'ABSPATH' ) || exit;

use Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType;

final class Tender_Blocks_Payment_Method extends AbstractPaymentMethodType {
	protected $name = 'tender';

	public function initialize() {
		$settings       = get_option( Tender_Settings::GATEWAY_SETTINGS, array() );
		$this->settings = is_array( $settings ) ? $settings : array();
	}

	public function is_active() {
		return 'yes' === $this->get_setting( 'enabled', 'no' ) && Tender_Settings::is_connected() && Tender_Settings::offers_currency( (string) get_woocommerce_currency() );
	}

	public function get_payment_method_script_handles() {
		wp_register_script(
			'tender-blocks',
			plugins_url( 'assets/js/blocks.js', TENDER_PLUGIN_FILE ),
			array( 'wc-blocks-registry', 'wc-settings', 'wp-element', 'wp-i18n' ),
			TENDER_PLUGIN_VERSION,
			true
		);
		wp_set_script_translations( 'tender-blocks', 'tender-for-woocommerce', plugin_dir_path( TENDER_PLUGIN_FILE ) . 'languages' );
		return array( 'tender-blocks' );
	}

	public function get_payment_method_data() {
		return array(
			'title'       => $this->get_setting( 'title', __( 'Crypto (Tender)', 'tender-for-woocommerce' ) ),
			'description' => $this->get_setting( 'description', '' ),
			'supports'    => array( 'products' ),
		);
	}
}
