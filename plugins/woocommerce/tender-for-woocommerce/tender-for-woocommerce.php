<?php
/**
 * Plugin Name: Tender for WooCommerce
 * Description: Take crypto payments through Tender: one invoice per order, the buyer pays on Tender's hosted checkout, and Tender's signed notifications mark the order paid.
 * Version: 1.0.0
 * Requires at least: 6.1
 * Requires PHP: 8.1
 * Requires Plugins: woocommerce
 * WC requires at least: 8.0
 * Text Domain: tender-for-woocommerce
 * License: MIT
 *
 * @package Tender
 */

defined( 'ABSPATH' ) || exit;

const TENDER_PLUGIN_VERSION = '1.0.0';
const TENDER_PLUGIN_FILE    = __FILE__;

require_once __DIR__ . '/includes/class-tender-api.php';
require_once __DIR__ . '/includes/class-tender-settings.php';
require_once __DIR__ . '/includes/class-tender-connection.php';
require_once __DIR__ . '/includes/class-tender-receiver.php';
require_once __DIR__ . '/includes/class-tender-seen-events.php';
require_once __DIR__ . '/includes/class-tender-order-sync.php';
require_once __DIR__ . '/includes/class-tender-checkout.php';
require_once __DIR__ . '/includes/class-tender-refunds.php';
require_once __DIR__ . '/includes/class-tender-webhook-endpoint.php';

// HPOS (custom order tables) and Checkout Blocks: the plugin reaches orders only through
// WooCommerce's order API, and registers a Blocks payment method type.
add_action(
	'before_woocommerce_init',
	static function () {
		if ( class_exists( \Automattic\WooCommerce\Utilities\FeaturesUtil::class ) ) {
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'custom_order_tables', TENDER_PLUGIN_FILE, true );
			\Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility( 'cart_checkout_blocks', TENDER_PLUGIN_FILE, true );
		}
	}
);

add_action(
	'plugins_loaded',
	static function () {
		if ( ! class_exists( 'WC_Payment_Gateway' ) ) {
			return; // WooCommerce is not active: nothing to register.
		}
		require_once __DIR__ . '/includes/class-tender-gateway.php';
		add_filter(
			'woocommerce_payment_gateways',
			static function ( $gateways ) {
				$gateways[] = 'Tender_Gateway';
				return $gateways;
			}
		);
		// Tender's deliveries arrive at ?wc-api=tender (the webhook_url sent at connect).
		add_action( 'woocommerce_api_tender', array( Tender_Webhook_Endpoint::class, 'handle_request' ) );
	}
);

add_action(
	'woocommerce_blocks_loaded',
	static function () {
		if ( ! class_exists( \Automattic\WooCommerce\Blocks\Payments\Integrations\AbstractPaymentMethodType::class ) ) {
			return;
		}
		require_once __DIR__ . '/includes/class-tender-blocks.php';
		add_action(
			'woocommerce_blocks_payment_method_type_registration',
			static function ( $registry ) {
				$registry->register( new Tender_Blocks_Payment_Method() );
			}
		);
	}
);

add_action( Tender_Seen_Events::PRUNE_HOOK, array( Tender_Seen_Events::class, 'prune_now' ), 10, 0 );
register_activation_hook( __FILE__, array( Tender_Seen_Events::class, 'activate' ) );
register_deactivation_hook(
	__FILE__,
	static function () {
		wp_clear_scheduled_hook( Tender_Seen_Events::PRUNE_HOOK );
		Tender_Connection::disconnect_on_deactivation();
	}
);
